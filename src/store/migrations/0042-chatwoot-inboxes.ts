import type { Kysely } from 'kysely';

// A Chatwoot inbox is a webhook whose deliveries go to Chatwoot's Application API (ADR 0067).
// Its row holds the Chatwoot account and inbox ids and, when it serves one number only, that
// number; the API access token is sealed in target_ciphertext, and the webhook's signing secret
// authenticates Chatwoot's callback. Two maps follow each inbox: which Chatwoot contact and
// conversation stand for a person talking to a number (so the first message creates them and
// later ones reuse them), and which Chatwoot message is which of ours, both ways (so an agent's
// reply is sent once, never echoed back, and its receipts find it).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('chatwoot_account_id', 'bigint').execute();
  await db.schema.alterTable('webhooks').addColumn('chatwoot_inbox_id', 'bigint').execute();
  await db.schema.alterTable('webhooks').addColumn('chatwoot_number', 'text').execute();
  await db.schema
    .createTable('chatwoot_conversations')
    .addColumn('webhook_id', 'text', (column) => column.notNull().references('webhooks.id').onDelete('cascade'))
    // Our number and the person (by phone, or by LID while the phone is unknown).
    .addColumn('person_key', 'text', (column) => column.notNull())
    .addColumn('number_phone', 'text', (column) => column.notNull())
    .addColumn('person_phone', 'text')
    .addColumn('person_lid', 'text')
    .addColumn('contact_id', 'bigint', (column) => column.notNull())
    .addColumn('source_id', 'text', (column) => column.notNull())
    .addColumn('conversation_id', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('chatwoot_conversations_pk', ['webhook_id', 'person_key'])
    .execute();
  await db.schema
    .createIndex('chatwoot_conversations_by_conversation')
    .on('chatwoot_conversations')
    .columns(['webhook_id', 'conversation_id'])
    .execute();
  await db.schema
    .createTable('chatwoot_messages')
    .addColumn('webhook_id', 'text', (column) => column.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (column) => column.notNull())
    .addColumn('chatwoot_message_id', 'bigint', (column) => column.notNull())
    .addColumn('conversation_id', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('chatwoot_messages_pk', ['webhook_id', 'message_id'])
    .execute();
  await db.schema
    .createIndex('chatwoot_messages_by_chatwoot_id')
    .on('chatwoot_messages')
    .columns(['webhook_id', 'chatwoot_message_id'])
    .unique()
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('chatwoot_messages').execute();
  await db.schema.dropTable('chatwoot_conversations').execute();
  await db.schema.alterTable('webhooks').dropColumn('chatwoot_number').execute();
  await db.schema.alterTable('webhooks').dropColumn('chatwoot_inbox_id').execute();
  await db.schema.alterTable('webhooks').dropColumn('chatwoot_account_id').execute();
}
