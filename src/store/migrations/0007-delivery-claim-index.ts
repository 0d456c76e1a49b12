import type { Kysely } from 'kysely';

// The delivery worker claims work per webhook: it skips from one webhook with pending
// deliveries to the next, and reads each one's oldest due deliveries, all through this index.
// Without it a claim would walk the queue in time order, past every row of an endpoint whose
// slots are full, so one hanging endpoint's backlog would slow every other endpoint's claims.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_claim_idx')
    .on('webhook_deliveries')
    .columns(['state', 'webhook_id', 'next_attempt_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_claim_idx').execute();
}
