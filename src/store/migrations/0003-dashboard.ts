import type { Kysely } from 'kysely';

// The dashboard's own state: server-side sessions, sign-in throttling and team invites.
// Session and invite tokens are bearer secrets, so only their SHA-256 is stored, as with API keys.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('dashboard_sessions_user_idx').on('dashboard_sessions').column('user_id').execute();

  // One row per throttled key ("email:…" or "ip:…"): failures counted within a fixed window.
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('throttle_key', 'text', (column) => column.primaryKey())
    .addColumn('failures', 'integer', (column) => column.notNull())
    .addColumn('window_started_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('user_invites')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('created_by_user_id', 'text', (column) => column.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('accepted_user_id', 'text', (column) => column.references('users.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('user_invites_account_idx').on('user_invites').column('account_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['user_invites', 'sign_in_failures', 'dashboard_sessions']) {
    await db.schema.dropTable(table).execute();
  }
}
