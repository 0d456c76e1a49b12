import type { SessionLease } from '../../src/domain/model.ts';
import type { Store } from '../../src/store/database.ts';
import { waitUntil } from './waiting.ts';

/** A lease held by a stand-in node on a stored number, for tests of owner-only writes without a lease keeper. */
export async function holdLease(store: Store, numberId: string, epoch = 1): Promise<SessionLease> {
  const lease = { numberId, nodeId: 'node_test', epoch };
  // A lease is live while its node's term is: the stand-in is a command node (it takes no share) whose term lasts the hour.
  const now = Date.now();
  await store.db
    .insertInto('cluster_nodes')
    .values({
      id: lease.nodeId,
      name: 'stand-in',
      url: null,
      role: 'command',
      hostname: 'test-stand-in',
      pid: 0,
      started_at: now,
      heartbeat_at: now,
      stopped_at: null,
      lease_expires_at: now + 3_600_000,
    })
    .onConflict((conflict) => conflict.column('id').doUpdateSet({ lease_expires_at: now + 3_600_000, stopped_at: null }))
    .execute();
  await store.db
    .insertInto('number_leases')
    .values({ number_id: numberId, node_id: lease.nodeId, epoch })
    .onConflict((conflict) => conflict.column('number_id').doUpdateSet({ node_id: lease.nodeId, epoch }))
    .execute();
  return lease;
}

/** What an engine's session is given when no database fences it (engine tests with recording events). */
export const UNFENCED_TEST_LEASE: SessionLease = { numberId: 'num_test', nodeId: 'node_test', epoch: 1 };

/** Waits until `condition` holds (test/support/waiting.ts), looking every 25 ms. */
export function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  return waitUntil(condition, what, 25);
}
