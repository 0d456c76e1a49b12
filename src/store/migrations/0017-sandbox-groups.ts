import type { Kysely } from 'kysely';

// The sandbox network's groups (ADR 0024): the simulated network keeps its groups in the
// gateway's database, as WhatsApp's servers keep theirs, so that a group made in test mode is
// still there after a restart, as the gateway's own record of it (number_groups) already was.
// Members are a JSON array of [phone, role] pairs: the group is read and written whole, and only
// the simulated network reads it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sandbox_groups')
    .addColumn('group_id', 'text', (column) => column.primaryKey())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('description', 'text')
    .addColumn('invite_code', 'text', (column) => column.notNull())
    .addColumn('members', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sandbox_groups').execute();
}
