import type { Kysely } from 'kysely';

// The delivery worker claims work per webhook: it skips from one webhook with pending
// deliveries to the next, and reads each one's oldest due deliveries, all through this index.
// It replaces the (state, next_attempt_at) index, through which a claim walked the queue in time
// order past every row of an endpoint whose slots were full: one hanging endpoint's backlog
// slowed every other endpoint's claims. With both present, planners still picked the old one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_claim_idx')
    .on('webhook_deliveries')
    .columns(['state', 'webhook_id', 'next_attempt_at'])
    .execute();
  await db.schema.dropIndex('webhook_deliveries_due_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.dropIndex('webhook_deliveries_claim_idx').execute();
}
