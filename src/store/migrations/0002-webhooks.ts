import type { Kysely } from 'kysely';

// Svix's model: an event (what happened, stored once), a webhook (where it goes), a delivery
// (one event to one webhook, with its state and next attempt) and attempts (every try, logged).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (column) => column.notNull())
    .addColumn('event_types', 'text', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull())
    // Secrets are needed in clear to sign, so they cannot be hashed; they are encrypted instead.
    .addColumn('secret_ciphertext', 'text', (column) => column.notNull())
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('disabled_reason', 'text')
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('webhooks_account_idx').on('webhooks').column('account_id').execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (column) => column.notNull())
    .addColumn('payload', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('event_id', 'text', (column) => column.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (column) => column.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('attempt_count', 'integer', (column) => column.notNull())
    .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('delivery_id', 'text', (column) => column.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (column) => column.notNull())
    .addColumn('attempted_at', 'bigint', (column) => column.notNull())
    .addColumn('duration_ms', 'integer', (column) => column.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_excerpt', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').column('delivery_id').execute();
  await db.schema.createIndex('webhook_attempts_time_idx').on('webhook_attempts').column('attempted_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_events', 'webhooks']) {
    await db.schema.dropTable(table).execute();
  }
}
