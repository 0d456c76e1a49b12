import type { Kysely } from 'kysely';

// One row per Idempotency-Key an account has used on the send API (docs/adr/0010). The primary
// key on (account_id, idempotency_key) is what lets only one request, in any process, claim a
// key. message_id is chosen when the key is claimed, before the message row exists, so that a
// retry after a crash can tell whether the original got as far as writing its message.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('idempotency_key', 'text', (column) => column.notNull())
    .addColumn('request_fingerprint', 'text', (column) => column.notNull())
    .addColumn('message_id', 'text', (column) => column.notNull())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('locked_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'idempotency_key'])
    .execute();
  // The once-a-minute purge of expired keys reads by age, across accounts.
  await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
