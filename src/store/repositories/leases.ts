import { sql, type RawBuilder } from 'kysely';
import { newId } from '../../domain/ids.ts';
import type { SessionLease } from '../../domain/model.ts';
import type { Executor } from '../database.ts';

export type Dialect = 'sqlite' | 'postgres';

/** Rows per statement where a statement takes parameters per row: both databases bound their count. */
const LEASE_BATCH = 1_000;

/**
 * Lease times come from the database's clock on PostgreSQL, so that nodes whose clocks disagree
 * still agree on when a lease ends. SQLite has one node, whose clock is the only one.
 */
export function databaseNow(dialect: Dialect): RawBuilder<number> {
  return dialect === 'postgres' ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint` : sql<number>`${Date.now()}`;
}

/** An owner-only write was refused: the lease it carried is no longer the number's current one. */
export class StaleLeaseError extends Error {
  constructor(
    readonly lease: SessionLease,
    readonly current: { nodeId: string | null; epoch: number } | undefined,
  ) {
    super(
      `Refused a write for ${lease.numberId} under epoch ${lease.epoch} of node ${lease.nodeId}: the lease is now ${current === undefined ? 'gone' : `epoch ${current.epoch} of ${current.nodeId ?? 'no node'}`}.`,
    );
    this.name = 'StaleLeaseError';
  }
}

/**
 * The fence of owner-only writes: call it in the write's own transaction. On PostgreSQL the lease
 * row is read FOR KEY SHARE, and a claim (the only way a node gains a lease) locks its rows FOR
 * UPDATE, which that conflicts with: a takeover committing meanwhile either comes first (and
 * this refuses) or waits for this transaction, so a stale owner's write and a new owner's claim
 * never interleave.
 *
 * KEY SHARE rather than SHARE so that the owner's renewal, an update of `expires_at` alone,
 * does not conflict with the fence. Under a steady stream of sends, fenced transactions overlap
 * without a gap; a renewal that had to wait for all of them to end waited past the node's trust
 * window, and the node stopped its own sessions (seen at 400 sends/s in the send benchmark).
 */
export async function assertLeaseHeld(db: Executor, dialect: Dialect, lease: SessionLease): Promise<void> {
  const row = await db
    .selectFrom('number_leases')
    .select(['node_id', 'epoch'])
    .where('number_id', '=', lease.numberId)
    .$if(dialect === 'postgres', (query) => query.forKeyShare())
    .executeTakeFirst();
  if (row === undefined || row.node_id !== lease.nodeId || Number(row.epoch) !== lease.epoch) {
    throw new StaleLeaseError(lease, row === undefined ? undefined : { nodeId: row.node_id, epoch: Number(row.epoch) });
  }
}

export interface NodeRegistration {
  id: string;
  name: string;
  url: string | null;
  role: 'server' | 'command';
  hostname: string;
  pid: number;
}

/** Records a node, live for one TTL from now: it is counted in the shares from this moment. */
export async function registerNode(db: Executor, dialect: Dialect, node: NodeRegistration, ttlMs: number): Promise<void> {
  await db
    .insertInto('cluster_nodes')
    .values({
      ...node,
      started_at: databaseNow(dialect),
      heartbeat_at: databaseNow(dialect),
      stopped_at: null,
      lease_expires_at: sql<number>`${databaseNow(dialect)} + ${ttlMs}`,
    })
    .execute();
}

/**
 * Heartbeats and renews every lease the node holds, in one write of the node's own row: a
 * lease is live while its node's expiry is ahead, so the cost does not grow with the numbers
 * held (docs/adr/0041-node-leases-and-pulled-handovers.md). False when the node's leases had
 * already run out: they are never renewed once ended, since another node may have taken any of
 * them meanwhile (see restartNodeLeases).
 */
export async function renewNode(db: Executor, dialect: Dialect, nodeId: string, ttlMs: number): Promise<boolean> {
  const now = databaseNow(dialect);
  const result = await db
    .updateTable('cluster_nodes')
    .set({ heartbeat_at: now, lease_expires_at: sql<number>`${now} + ${ttlMs}` })
    .where('id', '=', nodeId)
    .where('lease_expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * For a node whose leases ran out: gives up whatever leases still name it (none of them may
 * be trusted: another node could claim any at any moment) and starts a fresh expiry, in one
 * transaction, so that no lease of the ended term comes back to life. Returns what it gave up.
 */
export async function restartNodeLeases(db: Executor, dialect: Dialect, nodeId: string, ttlMs: number): Promise<SessionLease[]> {
  const now = databaseNow(dialect);
  const named = await db
    .selectFrom('number_leases')
    .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'number_leases.number_id')
    .select(['number_leases.number_id', 'whatsapp_numbers.phone'])
    .where('number_leases.node_id', '=', nodeId)
    .execute();
  const phones = new Map(named.map((row) => [row.number_id, row.phone]));
  const released = await db
    .updateTable('number_leases')
    .set({ node_id: null, wanted_by: null })
    .where('node_id', '=', nodeId)
    .returning(['number_id', 'epoch'])
    .execute();
  const leases = released.map((row) => ({
    numberId: row.number_id,
    nodeId,
    epoch: Number(row.epoch),
    phone: phones.get(row.number_id) ?? '',
  }));
  await recordLeaseChanges(
    db,
    dialect,
    leases.map((lease) => ({ lease, fromNodeId: nodeId, toNodeId: null, reason: 'expired' })),
  );
  await db
    .updateTable('cluster_nodes')
    .set({ heartbeat_at: now, lease_expires_at: sql<number>`${now} + ${ttlMs}` })
    .where('id', '=', nodeId)
    .execute();
  return leases;
}

/**
 * SQLite only: a node whose term ended takes it up again, keeping every lease that still names
 * it, and returns those. Call it in a transaction. SQLite runs one write transaction at a time,
 * across processes too (every transaction begins IMMEDIATE), so no claim is under way meanwhile:
 * a lease that still names the node under its epoch was taken by nobody while the term was over,
 * and nobody else served it. Undefined for a node marked stopped. A node on SQLite whose event loop stalled past its TTL thus keeps
 * its numbers. PostgreSQL does not allow this: a claim that read the term as ended may still be
 * about to commit, so there a term once ended is never taken up again (restartNodeLeases).
 */
export async function reviveNodeTerm(db: Executor, nodeId: string, ttlMs: number): Promise<SessionLease[] | undefined> {
  const now = databaseNow('sqlite');
  const result = await db
    .updateTable('cluster_nodes')
    .set({ heartbeat_at: now, lease_expires_at: sql<number>`${now} + ${ttlMs}` })
    .where('id', '=', nodeId)
    .where('stopped_at', 'is', null)
    .executeTakeFirst();
  // A node marked stopped (by itself, or as dead by another) is never revived.
  if (Number(result.numUpdatedRows) === 0) return undefined;
  return listNodeLeases(db, nodeId);
}

/** A SQL condition: the lease row's node holds it now (it names a node whose expiry is ahead). */
function heldByLiveNode(now: RawBuilder<number>): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from cluster_nodes where cluster_nodes.id = number_leases.node_id and cluster_nodes.lease_expires_at > ${now})`;
}

export async function setNodeUrl(db: Executor, nodeId: string, url: string): Promise<void> {
  await db.updateTable('cluster_nodes').set({ url }).where('id', '=', nodeId).execute();
}

/** A stopped node's leases end with it: any it could not release are free at once. */
export async function markNodeStopped(db: Executor, dialect: Dialect, nodeId: string): Promise<void> {
  await db
    .updateTable('cluster_nodes')
    .set({ stopped_at: databaseNow(dialect), lease_expires_at: 0 })
    .where('id', '=', nodeId)
    .execute();
}

export interface ClusterNode extends NodeRegistration {
  startedAt: number;
  heartbeatAt: number;
  stoppedAt: number | null;
  /** Milliseconds since the last heartbeat, by the database's clock. */
  heartbeatAgeMs: number;
}

export async function listNodes(db: Executor, dialect: Dialect): Promise<ClusterNode[]> {
  const rows = await db
    .selectFrom('cluster_nodes')
    .selectAll()
    .select(sql<number>`${databaseNow(dialect)} - heartbeat_at`.as('age'))
    .orderBy('started_at', 'desc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    url: row.url,
    role: row.role as NodeRegistration['role'],
    hostname: row.hostname,
    pid: row.pid,
    startedAt: Number(row.started_at),
    heartbeatAt: Number(row.heartbeat_at),
    stoppedAt: row.stopped_at === null ? null : Number(row.stopped_at),
    heartbeatAgeMs: Number(row.age),
  }));
}

/** Gives every number without a lease row an empty one, so that claiming is a single update. */
export async function ensureLeaseRows(db: Executor): Promise<void> {
  await db
    .insertInto('number_leases')
    .columns(['number_id', 'node_id', 'epoch'])
    .expression((eb) =>
      eb
        .selectFrom('whatsapp_numbers')
        .leftJoin('number_leases', 'number_leases.number_id', 'whatsapp_numbers.id')
        .where('number_leases.number_id', 'is', null)
        .select(['whatsapp_numbers.id', sql<null>`null`.as('node_id'), sql<number>`0`.as('epoch')]),
    )
    .onConflict((conflict) => conflict.column('number_id').doNothing())
    .execute();
}

export interface ClaimedLease extends SessionLease {
  phone: string;
}

/**
 * Takes up to `limit` numbers that nobody holds or whose lease ran out. On PostgreSQL the
 * candidates are locked and skipped when locked, so nodes claiming at once share them out
 * instead of queueing on the same rows; the update checks again that each is still free.
 */
export async function claimLeases(
  db: Executor,
  dialect: Dialect,
  nodeId: string,
  limit: number,
  onlyNumberIds?: readonly string[],
): Promise<ClaimedLease[]> {
  if (limit <= 0) return [];
  const now = databaseNow(dialect);
  const candidates = await db
    .selectFrom('number_leases')
    .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'number_leases.number_id')
    .select(['number_leases.number_id', 'number_leases.node_id', 'whatsapp_numbers.phone'])
    .where((eb) => eb.or([eb('number_leases.node_id', 'is', null), eb.not(heldByLiveNode(now))]))
    .$if(onlyNumberIds !== undefined, (query) =>
      query.where('number_leases.number_id', 'in', onlyNumberIds!.length > 0 ? onlyNumberIds! : ['']),
    )
    .orderBy('number_leases.number_id')
    .limit(limit)
    // A node's own balancing skips rows another transaction holds: they are someone's business
    // now, and it takes others. A command taking named numbers waits for them instead (a fenced
    // write holds its row only to its commit, a frozen one only to the idle-transaction timeout),
    // or it would fail for a lock held a millisecond.
    .$if(dialect === 'postgres', (query) =>
      onlyNumberIds === undefined ? query.forUpdate('number_leases').skipLocked() : query.forUpdate('number_leases'),
    )
    .execute();
  if (candidates.length === 0) return [];
  const claimed = await db
    .updateTable('number_leases')
    .set((eb) => ({ node_id: nodeId, epoch: eb('epoch', '+', 1), wanted_by: null }))
    .where(
      'number_id',
      'in',
      candidates.map((candidate) => candidate.number_id),
    )
    .where((eb) => eb.or([eb('node_id', 'is', null), eb.not(heldByLiveNode(now))]))
    // Claimed under this node's own live term only: a node whose leases ended claims nothing until it restarts them.
    .where(sql<boolean>`exists (select 1 from cluster_nodes where id = ${nodeId} and lease_expires_at > ${now})`)
    .returning(['number_id', 'epoch'])
    .execute();
  const byId = new Map(candidates.map((candidate) => [candidate.number_id, candidate]));
  const leases = claimed.map((row) => ({
    numberId: row.number_id,
    nodeId,
    epoch: Number(row.epoch),
    phone: byId.get(row.number_id)!.phone,
  }));
  await recordLeaseChanges(
    db,
    dialect,
    leases.map((lease) => {
      const previous = byId.get(lease.numberId)!.node_id;
      return { lease, fromNodeId: previous, toNodeId: nodeId, reason: previous === null ? 'claimed' : 'taken_over' };
    }),
  );
  return leases;
}

/** Every lease that names the node, for comparing with what it believes it holds. */
export async function listNodeLeases(db: Executor, nodeId: string): Promise<SessionLease[]> {
  const rows = await db.selectFrom('number_leases').select(['number_id', 'epoch']).where('node_id', '=', nodeId).execute();
  return rows.map((row) => ({ numberId: row.number_id, nodeId, epoch: Number(row.epoch) }));
}

/**
 * Gives up the leases the node still holds, so that another node may claim them at once; in
 * batches, since a statement's parameters are bounded.
 */
export async function releaseLeases(
  db: Executor,
  dialect: Dialect,
  leases: readonly ClaimedLease[],
  reason: 'released' | 'handed_over' | 'expired',
): Promise<void> {
  for (let start = 0; start < leases.length; start += LEASE_BATCH) {
    const batch = leases.slice(start, start + LEASE_BATCH);
    const released = await db
      .updateTable('number_leases')
      .set({ node_id: null, wanted_by: null })
      .where(
        'number_id',
        'in',
        batch.map((lease) => lease.numberId),
      )
      .where('node_id', '=', batch[0]!.nodeId)
      .returning(['number_id'])
      .execute();
    const releasedIds = new Set(released.map((row) => row.number_id));
    await recordLeaseChanges(
      db,
      dialect,
      batch
        .filter((lease) => releasedIds.has(lease.numberId))
        .map((lease) => ({ lease, fromNodeId: lease.nodeId, toNodeId: null, reason })),
    );
  }
}

export async function recordLeaseChanges(
  db: Executor,
  dialect: Dialect,
  changes: { lease: ClaimedLease; fromNodeId: string | null; toNodeId: string | null; reason: string }[],
): Promise<void> {
  for (let start = 0; start < changes.length; start += LEASE_BATCH) {
    await insertLeaseChanges(db, dialect, changes.slice(start, start + LEASE_BATCH));
  }
}

async function insertLeaseChanges(
  db: Executor,
  dialect: Dialect,
  changes: { lease: ClaimedLease; fromNodeId: string | null; toNodeId: string | null; reason: string }[],
): Promise<void> {
  if (changes.length === 0) return;
  await db
    .insertInto('lease_changes')
    .values(
      changes.map(({ lease, fromNodeId, toNodeId, reason }) => ({
        id: newId('leaseChange'),
        number_id: lease.numberId,
        phone: lease.phone,
        from_node_id: fromNodeId,
        to_node_id: toNodeId,
        epoch: lease.epoch,
        reason,
        at: databaseNow(dialect),
      })),
    )
    .execute();
}

export interface LeaseOwner {
  nodeId: string | null;
  epoch: number;
  /** Where the owner takes forwarded requests; null for a node without WAGW_NODE_URL. */
  url: string | null;
  /** Milliseconds until the lease ends; 0 or less once it has. */
  remainingMs: number;
}

/** Who holds the number's session now, as the database sees it. */
export async function findLeaseOwner(db: Executor, dialect: Dialect, numberId: string): Promise<LeaseOwner | undefined> {
  const row = await db
    .selectFrom('number_leases')
    .leftJoin('cluster_nodes', 'cluster_nodes.id', 'number_leases.node_id')
    .select([
      'number_leases.node_id',
      'number_leases.epoch',
      'cluster_nodes.url',
      sql<number>`coalesce(cluster_nodes.lease_expires_at, 0) - ${databaseNow(dialect)}`.as('remaining'),
    ])
    .where('number_leases.number_id', '=', numberId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { nodeId: row.node_id, epoch: Number(row.epoch), url: row.url ?? null, remainingMs: Number(row.remaining) };
}

export interface LeasedNumber {
  numberId: string;
  phone: string;
  engine: string;
  status: string;
  nodeId: string | null;
  epoch: number;
  remainingMs: number;
}

/** Every number with its lease, for the operator's view of the cluster. */
export async function listLeasedNumbers(db: Executor, dialect: Dialect): Promise<LeasedNumber[]> {
  const rows = await db
    .selectFrom('whatsapp_numbers')
    .leftJoin('number_leases', 'number_leases.number_id', 'whatsapp_numbers.id')
    .leftJoin('cluster_nodes', 'cluster_nodes.id', 'number_leases.node_id')
    .select([
      'whatsapp_numbers.id',
      'whatsapp_numbers.phone',
      'whatsapp_numbers.engine',
      'whatsapp_numbers.status',
      'number_leases.node_id',
      'number_leases.epoch',
      sql<number | null>`cluster_nodes.lease_expires_at - ${databaseNow(dialect)}`.as('remaining'),
    ])
    .orderBy('whatsapp_numbers.phone')
    .execute();
  return rows.map((row) => ({
    numberId: row.id,
    phone: row.phone,
    engine: row.engine,
    status: row.status,
    nodeId: row.node_id ?? null,
    epoch: Number(row.epoch ?? 0),
    remainingMs: Number(row.remaining ?? 0),
  }));
}

export interface LeaseChange {
  phone: string;
  fromNodeId: string | null;
  toNodeId: string | null;
  epoch: number;
  reason: string;
  at: number;
}

export async function listRecentLeaseChanges(db: Executor, limit: number): Promise<LeaseChange[]> {
  const rows = await db.selectFrom('lease_changes').selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    phone: row.phone,
    fromNodeId: row.from_node_id,
    toNodeId: row.to_node_id,
    epoch: Number(row.epoch),
    reason: row.reason,
    at: Number(row.at),
  }));
}

/**
 * Ends at once the leases of nodes known to be dead: a predecessor on this host whose process
 * is gone (a restart after a crash), so its numbers need not wait out their TTL.
 */
export async function retireNode(db: Executor, dialect: Dialect, nodeId: string): Promise<void> {
  await db.updateTable('cluster_nodes').set({ lease_expires_at: 0 }).where('id', '=', nodeId).execute();
  await db
    .updateTable('cluster_nodes')
    .set({ stopped_at: databaseNow(dialect) })
    .where('id', '=', nodeId)
    .where('stopped_at', 'is', null)
    .execute();
}

/** Forgets nodes and lease changes older than the cutoff (epoch milliseconds). */
export async function pruneClusterHistory(db: Executor, cutoff: number): Promise<void> {
  await db.deleteFrom('lease_changes').where('at', '<', cutoff).execute();
  await db.deleteFrom('cluster_nodes').where('heartbeat_at', '<', cutoff).execute();
}
