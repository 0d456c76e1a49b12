import type { SessionLease } from '../../src/domain/model.ts';
import type { Store } from '../../src/store/database.ts';

/** A lease held by a stand-in node on a stored number, for tests of owner-only writes without a lease keeper. */
export async function holdLease(store: Store, numberId: string, epoch = 1): Promise<SessionLease> {
  const lease = { numberId, nodeId: 'node_test', epoch };
  await store.db
    .insertInto('number_leases')
    .values({ number_id: numberId, node_id: lease.nodeId, epoch, expires_at: Date.now() + 3_600_000 })
    .onConflict((conflict) => conflict.column('number_id').doUpdateSet({ node_id: lease.nodeId, epoch, expires_at: Date.now() + 3_600_000 }))
    .execute();
  return lease;
}

/** What an engine's session is given when no database fences it (engine tests with recording events). */
export const UNFENCED_TEST_LEASE: SessionLease = { numberId: 'num_test', nodeId: 'node_test', epoch: 1 };
