import { sql, type Kysely } from 'kysely';

// An event stream is a destination whose client holds a WebSocket (docs/adr/0068-event-streams.md).
// `stream_holder` names the connection holding it, so that one client at a time takes its events
// (a new connection on any node takes over); `stream_sent` counts what the stream has sent, and
// each delivery sent records its place in that count (`stream_position`), so that a client that
// reconnects with the last event it saw is sent again exactly what came after it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('stream_holder', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('stream_sent', 'bigint').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('stream_position', 'bigint').execute();
  // Only streams' deliveries have a position: a partial index costs webhooks' writes nothing.
  await db.schema
    .createIndex('webhook_deliveries_stream_idx')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'stream_position'])
    .where(sql.ref('stream_position'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_stream_idx').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('stream_position').execute();
  await db.schema.alterTable('webhooks').dropColumn('stream_sent').execute();
  await db.schema.alterTable('webhooks').dropColumn('stream_holder').execute();
}
