import type { Kysely } from 'kysely';

// The audit log of management actions (docs/adr/0053-audit-log.md). Rows are only ever added.
// `details` is a small JSON object of facts (never a secret). Read newest first, per account and
// across the gateway, hence the two indexes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('at', 'bigint', (column) => column.notNull())
    .addColumn('account_id', 'text')
    .addColumn('actor_kind', 'text', (column) => column.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_label', 'text')
    .addColumn('source_address', 'text')
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target_id', 'text')
    .addColumn('details', 'text')
    .execute();
  await db.schema.createIndex('audit_events_account_at_idx').on('audit_events').columns(['account_id', 'at', 'id']).execute();
  await db.schema.createIndex('audit_events_at_idx').on('audit_events').columns(['at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
