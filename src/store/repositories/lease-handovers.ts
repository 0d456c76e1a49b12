import { sql } from 'kysely';
import type { Executor } from '../database.ts';
import { databaseNow, recordLeaseChanges, type ClaimedLease, type Dialect } from './leases.ts';

/** How the numbers are spread over the nodes, as one node sees it at its tick (src/cluster/lease-plan.ts reads it). */
export interface ClusterView {
  /** Numbers with a lease row: every number. */
  total: number;
  /** Servers whose leases are live and that have not stopped: the ones the numbers are shared among. */
  liveServers: readonly string[];
  /** Leases per live node (servers and commands). */
  heldBy: ReadonlyMap<string, number>;
  /** Leases of each live node that another node has asked for and not yet been given. */
  wantedFrom: ReadonlyMap<string, number>;
  /** Numbers nobody holds: never held, released, or of a node whose leases ran out. */
  claimable: number;
}

/** One read of the lease table, grouped by holder: what a node's tick decides its claims, requests and handovers from. */
export async function readClusterView(db: Executor, dialect: Dialect): Promise<ClusterView> {
  const now = databaseNow(dialect);
  const [servers, groups] = await Promise.all([
    db
      .selectFrom('cluster_nodes')
      .select('id')
      .where('stopped_at', 'is', null)
      .where('role', '=', 'server')
      .where('lease_expires_at', '>', now)
      .execute(),
    db
      .selectFrom('number_leases')
      .leftJoin('cluster_nodes', 'cluster_nodes.id', 'number_leases.node_id')
      .select([
        'number_leases.node_id',
        sql<number>`case when cluster_nodes.lease_expires_at > ${now} then 1 else 0 end`.as('live'),
        sql<number>`count(*)`.as('held'),
        sql<number>`count(number_leases.wanted_by)`.as('wanted'),
      ])
      .groupBy(['number_leases.node_id', 'cluster_nodes.lease_expires_at'])
      .execute(),
  ]);
  const heldBy = new Map<string, number>();
  const wantedFrom = new Map<string, number>();
  let total = 0;
  let claimable = 0;
  for (const group of groups) {
    const held = Number(group.held);
    total += held;
    if (group.node_id === null || Number(group.live) !== 1) {
      claimable += held;
      continue;
    }
    heldBy.set(group.node_id, held);
    wantedFrom.set(group.node_id, Number(group.wanted));
  }
  return { total, liveServers: servers.map((server) => server.id), heldBy, wantedFrom, claimable };
}

/**
 * Asks another node for up to `count` of its numbers, marking them wanted by this one; returns
 * their ids. On PostgreSQL the rows are locked FOR NO KEY UPDATE, which the owner's fenced
 * writes (FOR KEY SHARE) do not wait for, and rows locked by anyone else are skipped.
 */
export async function requestLeases(db: Executor, dialect: Dialect, nodeId: string, fromNodeId: string, count: number): Promise<string[]> {
  if (count <= 0) return [];
  const candidates = await db
    .selectFrom('number_leases')
    .select('number_id')
    .where('node_id', '=', fromNodeId)
    .where('wanted_by', 'is', null)
    .orderBy('number_id')
    .limit(count)
    .$if(dialect === 'postgres', (query) => query.forNoKeyUpdate().skipLocked())
    .execute();
  if (candidates.length === 0) return [];
  const marked = await db
    .updateTable('number_leases')
    .set({ wanted_by: nodeId })
    .where(
      'number_id',
      'in',
      candidates.map((row) => row.number_id),
    )
    .where('node_id', '=', fromNodeId)
    .where('wanted_by', 'is', null)
    .returning('number_id')
    .execute();
  return marked.map((row) => row.number_id);
}

export interface LeaseRequestState {
  numberId: string;
  nodeId: string | null;
  epoch: number;
  wantedBy: string | null;
  phone: string;
}

/** Where the numbers a node asked for stand now: handed over to it, still waiting, or gone elsewhere. */
export async function findRequestedLeases(db: Executor, numberIds: readonly string[]): Promise<LeaseRequestState[]> {
  if (numberIds.length === 0) return [];
  const rows = await db
    .selectFrom('number_leases')
    .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'number_leases.number_id')
    .select([
      'number_leases.number_id',
      'number_leases.node_id',
      'number_leases.epoch',
      'number_leases.wanted_by',
      'whatsapp_numbers.phone',
    ])
    .where('number_leases.number_id', 'in', numberIds)
    .execute();
  return rows.map((row) => ({
    numberId: row.number_id,
    nodeId: row.node_id,
    epoch: Number(row.epoch),
    wantedBy: row.wanted_by,
    phone: row.phone,
  }));
}

/** Takes back a node's requests that were not answered (the holder may be stuck, or the asker is leaving). */
export async function withdrawRequests(db: Executor, nodeId: string, numberIds?: readonly string[]): Promise<void> {
  await db
    .updateTable('number_leases')
    .set({ wanted_by: null })
    .where('wanted_by', '=', nodeId)
    .$if(numberIds !== undefined, (query) => query.where('number_id', 'in', numberIds!.length > 0 ? numberIds! : ['']))
    .execute();
}

export interface WantedLease extends ClaimedLease {
  wantedBy: string;
}

/** The node's leases that other nodes asked for. */
export async function listWantedLeases(db: Executor, nodeId: string): Promise<WantedLease[]> {
  const rows = await db
    .selectFrom('number_leases')
    .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'number_leases.number_id')
    .select(['number_leases.number_id', 'number_leases.epoch', 'number_leases.wanted_by', 'whatsapp_numbers.phone'])
    .where('number_leases.node_id', '=', nodeId)
    .where('number_leases.wanted_by', 'is not', null)
    .orderBy('number_leases.number_id')
    .execute();
  return rows.map((row) => ({ numberId: row.number_id, nodeId, epoch: Number(row.epoch), phone: row.phone, wantedBy: row.wanted_by! }));
}

/** Refuses requests for the node's numbers (it would fall below its share, or no longer serves them). */
export async function declineRequests(db: Executor, nodeId: string, numberIds: readonly string[]): Promise<void> {
  if (numberIds.length === 0) return;
  await db
    .updateTable('number_leases')
    .set({ wanted_by: null })
    .where('node_id', '=', nodeId)
    .where('number_id', 'in', numberIds)
    .execute();
}

/**
 * Gives each lease, whose session the holder has stopped, straight to the node that asked for
 * it, under the next epoch, so the number is never without an owner. A claim's FOR UPDATE is
 * taken on each row first, as a claim's is: a fenced write of the old epoch either commits first
 * or is refused. An asker that is gone (stopped, or its leases ran out) gets nothing: the lease
 * is released instead, for any node to claim. Call it in a transaction.
 */
export async function handOverLeases(db: Executor, dialect: Dialect, leases: readonly WantedLease[]): Promise<void> {
  const now = databaseNow(dialect);
  const sorted = [...leases].sort((a, b) => (a.numberId < b.numberId ? -1 : 1));
  for (const lease of sorted) {
    const row = await db
      .selectFrom('number_leases')
      .select('epoch')
      .where('number_id', '=', lease.numberId)
      .where('node_id', '=', lease.nodeId)
      .where('epoch', '=', lease.epoch)
      .$if(dialect === 'postgres', (query) => query.forUpdate())
      .executeTakeFirst();
    if (row === undefined) continue;
    const asker = await db
      .selectFrom('cluster_nodes')
      .select('id')
      .where('id', '=', lease.wantedBy)
      .where('stopped_at', 'is', null)
      .where('lease_expires_at', '>', now)
      .executeTakeFirst();
    const to = asker === undefined ? null : lease.wantedBy;
    await db
      .updateTable('number_leases')
      .set((eb) => ({ node_id: to, epoch: to === null ? eb.ref('epoch') : eb('epoch', '+', 1), wanted_by: null }))
      .where('number_id', '=', lease.numberId)
      .execute();
    await recordLeaseChanges(db, dialect, [
      {
        lease: { ...lease, epoch: to === null ? lease.epoch : lease.epoch + 1 },
        fromNodeId: lease.nodeId,
        toNodeId: to,
        reason: 'handed_over',
      },
    ]);
  }
}
