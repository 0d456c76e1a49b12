import { sql, type Kysely } from 'kysely';

// Scale-out (docs/adr/0018-cluster-leases.md). Nodes register and heartbeat; each number's session
// is held under a lease whose epoch grows on every change of owner, and owner-only writes are
// checked against it. lease_changes keeps the recent history of owners for the operator.
// Incoming messages become unique per number and WhatsApp id, so that a network (or Baileys)
// delivering a message again after a failover stores it, and reports it, once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cluster_nodes')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('url', 'text')
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('hostname', 'text', (column) => column.notNull())
    .addColumn('pid', 'integer', (column) => column.notNull())
    .addColumn('started_at', 'bigint', (column) => column.notNull())
    .addColumn('heartbeat_at', 'bigint', (column) => column.notNull())
    .addColumn('stopped_at', 'bigint')
    .execute();
  await db.schema
    .createTable('number_leases')
    .addColumn('number_id', 'text', (column) => column.primaryKey().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('node_id', 'text')
    .addColumn('epoch', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('number_leases_node_idx').on('number_leases').columns(['node_id', 'expires_at']).execute();
  await db.schema
    .createTable('lease_changes')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('number_id', 'text', (column) => column.notNull())
    .addColumn('phone', 'text', (column) => column.notNull())
    .addColumn('from_node_id', 'text')
    .addColumn('to_node_id', 'text')
    .addColumn('epoch', 'bigint', (column) => column.notNull())
    .addColumn('reason', 'text', (column) => column.notNull())
    .addColumn('at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('lease_changes_at_idx').on('lease_changes').columns(['at']).execute();
  // Earlier versions could store an incoming message twice; keep the first of each before the index.
  await sql`delete from messages where direction = 'inbound' and engine_message_id is not null and id not in (
    select min(id) from messages where direction = 'inbound' and engine_message_id is not null group by number_id, engine_message_id)`.execute(
    db,
  );
  await sql`create unique index messages_inbound_engine_id_idx on messages (number_id, engine_message_id) where direction = 'inbound'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index messages_inbound_engine_id_idx`.execute(db);
  await db.schema.dropTable('lease_changes').execute();
  await db.schema.dropTable('number_leases').execute();
  await db.schema.dropTable('cluster_nodes').execute();
}
