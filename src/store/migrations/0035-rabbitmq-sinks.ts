import type { Kysely } from 'kysely';

// A webhook whose URL is amqp:// or amqps:// is a RabbitMQ sink (docs/adr/0065-event-sinks.md).
// Its URL carries the broker's password, so the full URL is kept sealed (target_ciphertext) and
// `url` holds it with the password removed, for display and the host's rate. The exchange and
// routing-key template say where each event is published. HTTP webhooks leave all three null.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('target_ciphertext', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('amqp_exchange', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('amqp_routing_key', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('amqp_routing_key').execute();
  await db.schema.alterTable('webhooks').dropColumn('amqp_exchange').execute();
  await db.schema.alterTable('webhooks').dropColumn('target_ciphertext').execute();
}
