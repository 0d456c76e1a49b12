import type { Kysely } from 'kysely';

// Migrations are written once for both dialects: only types and constraints that SQLite and
// PostgreSQL share (text, integer, bigint) are used.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('plan', 'text', (column) => column.notNull())
    .addColumn('custom_monthly_limit', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.references('accounts.id').onDelete('cascade'))
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('password_hash', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('is_operator', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('users_account_idx').on('users').column('account_id').execute();

  await db.schema
    .createTable('whatsapp_numbers')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('holder_user_id', 'text', (column) => column.references('users.id').onDelete('set null'))
    .addColumn('phone', 'text', (column) => column.notNull().unique())
    .addColumn('engine', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('whatsapp_numbers_account_idx').on('whatsapp_numbers').column('account_id').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('key_hash', 'text', (column) => column.notNull().unique())
    .addColumn('hint', 'text', (column) => column.notNull())
    .addColumn('created_by_user_id', 'text', (column) => column.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    // A removed number frees its phone for reuse; its message history stays with the account.
    .addColumn('number_id', 'text', (column) => column.references('whatsapp_numbers.id').onDelete('set null'))
    .addColumn('direction', 'text', (column) => column.notNull())
    .addColumn('from_phone', 'text', (column) => column.notNull())
    .addColumn('to_phone', 'text', (column) => column.notNull())
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('engine_message_id', 'text')
    .addColumn('error_code', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('messages_account_created_idx').on('messages').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('messages_number_idx').on('messages').column('number_id').execute();
  await db.schema.createIndex('messages_engine_message_idx').on('messages').column('engine_message_id').execute();

  await db.schema
    .createTable('monthly_usage')
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('period', 'text', (column) => column.notNull())
    .addColumn('used', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('monthly_usage_pk', ['account_id', 'period'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['monthly_usage', 'messages', 'api_keys', 'whatsapp_numbers', 'users', 'accounts']) {
    await db.schema.dropTable(table).execute();
  }
}
