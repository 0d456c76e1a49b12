import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { KeyRevocationListener } from '../../../src/cluster/key-revocations.ts';
import { LeaseKeeper } from '../../../src/cluster/lease-keeper.ts';
import { Scheduler } from '../../../src/jobs/scheduler.ts';
import { loadConfig } from '../../../src/config.ts';
import { newId } from '../../../src/domain/ids.ts';
import { newWhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { insertAccount } from '../../../src/store/repositories/accounts.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import { createMigratedTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { until } from '../../support/leases.ts';

// How numbers spread when nodes join or start together (docs/adr/0041-node-leases-and-pulled-handovers.md).
// PostgreSQL only: SQLite serves one node. Each node is a lease keeper whose sessions are only
// recorded, listening on the cluster channel as a node does; the TTL is short, and the pace of
// starts scaled to it, so that a tick asks for what a default node's tick asks for (20 numbers).

const silent = pino({ level: 'silent' });
const TTL_MS = 3_000;
const STARTS_PER_SECOND = 20;

interface SessionEvent {
  numberId: string;
  node: string;
  kind: 'start' | 'stop';
  at: number;
}

interface TestNode {
  keeper: LeaseKeeper;
  listener: KeyRevocationListener;
  /** How many periodic lease ticks the node has run: a third of the TTL each, so 9 are 3 TTLs on the node's own clock, however loaded the machine. */
  ticks(): number;
}

/** Three TTLs, in a node's periodic ticks (one per third of the TTL). */
const THREE_TTLS_IN_TICKS = 9;

async function seedNumbers(store: Store, count: number): Promise<void> {
  const accountId = newId('account');
  const createdAt = new Date();
  await store.db.transaction().execute(async (trx) => {
    await insertAccount(trx, { id: accountId, name: 'Spread', plan: 'enterprise', customMonthlyLimit: null, createdAt });
    for (let index = 0; index < count; index++) {
      const phone = `+447701${String(index).padStart(6, '0')}` as E164;
      await insertNumber(
        trx,
        newWhatsAppNumber({ id: newId('number'), accountId, phone, engine: 'sandbox', status: 'connected' }, createdAt),
      );
    }
  });
}

/** Leases per live node, from the database. */
async function holdings(store: Store): Promise<Map<string, number>> {
  const rows = await store.db
    .selectFrom('number_leases')
    .innerJoin('cluster_nodes', 'cluster_nodes.id', 'number_leases.node_id')
    .select(['number_leases.node_id', (eb) => eb.fn.countAll<number>().as('held')])
    .where('cluster_nodes.stopped_at', 'is', null)
    .groupBy('number_leases.node_id')
    .execute();
  return new Map(rows.map((row) => [row.node_id!, Number(row.held)]));
}

/**
 * The longest time any number went without an owner (from a change of its lease to nobody
 * until the next to a node) and without a running session (from a stop until the next start),
 * in milliseconds.
 */
async function longestGaps(store: Store, events: readonly SessionEvent[], since: number): Promise<{ ownership: number; session: number }> {
  const changes = await store.db
    .selectFrom('lease_changes')
    .select(['number_id', 'to_node_id', 'at'])
    .orderBy('at')
    .orderBy('id')
    .execute();
  let ownership = 0;
  const unownedSince = new Map<string, number>();
  for (const change of changes) {
    if (change.to_node_id === null) unownedSince.set(change.number_id, Number(change.at));
    else if (unownedSince.has(change.number_id)) {
      ownership = Math.max(ownership, Number(change.at) - unownedSince.get(change.number_id)!);
      unownedSince.delete(change.number_id);
    }
  }
  for (const at of unownedSince.values()) ownership = Math.max(ownership, Date.now() - at);
  let session = 0;
  const stoppedAt = new Map<string, number>();
  for (const event of events.filter((entry) => entry.at >= since)) {
    if (event.kind === 'stop') stoppedAt.set(event.numberId, event.at);
    else if (stoppedAt.has(event.numberId)) {
      session = Math.max(session, event.at - stoppedAt.get(event.numberId)!);
      stoppedAt.delete(event.numberId);
    }
  }
  for (const at of stoppedAt.values()) session = Math.max(session, Date.now() - at);
  return { ownership, session };
}

/** Waits until every node has renewed `rounds` more times: ticks, counted, rather than a sleep. */
async function untilTicked(store: Store, nodes: readonly TestNode[], rounds: number): Promise<void> {
  const heartbeats = async () =>
    new Map(
      (await store.db.selectFrom('cluster_nodes').select(['id', 'heartbeat_at']).execute()).map((row) => [
        row.id,
        Number(row.heartbeat_at),
      ]),
    );
  const from = await heartbeats();
  const intervalMs = nodes[0]!.keeper.renewIntervalMs;
  await until(async () => {
    const now = await heartbeats();
    return nodes.every((node) => (now.get(node.keeper.nodeId) ?? 0) - (from.get(node.keeper.nodeId) ?? 0) >= rounds * intervalMs * 0.9);
  }, `every node to renew ${rounds} more times`);
}

describe('numbers spread gradually and evenly (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let store: Store;
  let events: SessionEvent[];
  let nodes: TestNode[];

  const startNode = async (name: string): Promise<TestNode> => {
    const scheduler = new Scheduler(silent);
    const keeper = new LeaseKeeper(
      store,
      { ttlMs: TTL_MS, maxSessions: null, nodeName: name, nodeUrl: null, drainMs: 1_000, sessionStartsPerSecond: STARTS_PER_SECOND },
      silent,
      scheduler,
    );
    const running = new Set<string>();
    keeper.attach({
      leasesGained: (leases) => {
        for (const lease of leases) {
          running.add(lease.numberId);
          events.push({ numberId: lease.numberId, node: keeper.nodeId, kind: 'start', at: Date.now() });
        }
      },
      leaseLost: async (numberId) => {
        if (running.delete(numberId)) events.push({ numberId, node: keeper.nodeId, kind: 'stop', at: Date.now() });
      },
      pendingStarts: () => 0,
      drain: async () => undefined,
    });
    // As a node does: it listens on the cluster channel before it registers.
    const listener = new KeyRevocationListener(
      database.url,
      { keyRevoked: () => undefined, missedSignals: () => undefined, leasesReleased: () => void keeper.tickSoon() },
      silent,
    );
    await listener.start();
    await keeper.start();
    const ticks = () => scheduler.list().find((task) => task.name === 'lease-tick')?.runs ?? 0;
    const node = { keeper, listener, ticks };
    nodes.push(node);
    return node;
  };

  const starts = () => events.filter((event) => event.kind === 'start').length;

  before(async () => {
    database = await createMigratedTestDatabase('postgres');
    store = openStore(loadConfig({ DATABASE_URL: database.url }).database);
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  const stopAll = async () => {
    for (const node of nodes.splice(0)) {
      await node.keeper.stop();
      await node.listener.stop();
    }
    await store.db.deleteFrom('whatsapp_numbers').execute();
    await store.db.deleteFrom('lease_changes').execute();
  };

  it('three nodes started together on 1,000 numbers are even within 3 TTLs, each number started about once', async () => {
    events = [];
    nodes = [];
    try {
      await seedNumbers(store, 1_000);
      const startedAt = Date.now();
      // Started together as an orchestrator starts processes: a quarter of a second apart.
      await Promise.all(['a', 'b', 'c'].map((name, index) => delay(250 * index).then(() => startNode(name))));
      const even = async () => {
        const held = await holdings(store);
        const counts = nodes.map((node) => held.get(node.keeper.nodeId) ?? 0);
        return (
          counts.reduce((sum, count) => sum + count, 0) === 1_000 && counts.every((count) => Math.abs(count - 1_000 / 3) <= 1_000 / 3 / 20)
        );
      };
      await until(even, 'every number owned, and each node within 5 % of a third');
      const evenAfterMs = Date.now() - startedAt;
      // Within 3 TTLs, counted in the last node's own ticks since it started (it started last).
      const ticksToEven = nodes.at(-1)!.ticks();
      assert.ok(ticksToEven <= THREE_TTLS_IN_TICKS, `even within 3 TTLs: after ${ticksToEven} ticks of the last node (${evenAfterMs} ms)`);
      // And it stays so: no moves after the spread is even, beyond what evening it out needs.
      await untilTicked(store, nodes, 3);
      assert.ok(await even(), 'still even three ticks later');
      assert.ok(starts() <= 1_050, `at most 1,050 session starts in all (${starts()}, even after ${evenAfterMs} ms)`);
      const handovers = await store.db.selectFrom('lease_changes').select('id').where('reason', '=', 'handed_over').execute();
      assert.equal(starts(), 1_000 + handovers.length, 'each number started once, and once more per move');
    } finally {
      await stopAll();
    }
  });

  it('a fourth node joining three with 64 numbers: never a number without an owner for 1 s, its share within 3 TTLs, the fewest moves', async () => {
    events = [];
    nodes = [];
    try {
      await seedNumbers(store, 64);
      await Promise.all(['a', 'b', 'c'].map((name) => startNode(name)));
      const settled = async () => {
        const held = await holdings(store);
        const wanted = await store.db.selectFrom('number_leases').select('number_id').where('wanted_by', 'is not', null).execute();
        return (
          [...held.values()].reduce((sum, count) => sum + count, 0) === 64 &&
          [...held.values()].every((count) => count >= 21) &&
          wanted.length === 0
        );
      };
      await until(settled, 'the three nodes to share the 64 numbers');
      const before = await holdings(store);
      const fewestMoves = [...before.values()].reduce((sum, count) => sum + Math.max(0, count - 16), 0);
      const changesBefore = new Set((await store.db.selectFrom('lease_changes').select('id').execute()).map((row) => row.id));
      const joinedAt = Date.now();

      const joiner = await startNode('d');
      await until(
        async () => [...(await holdings(store)).values()].every((count) => count === 16) && (await holdings(store)).size === 4,
        'each of the four nodes to hold 16',
      );
      const ticksToShare = joiner.ticks();
      assert.ok(ticksToShare <= THREE_TTLS_IN_TICKS, `the fair share within 3 TTLs: after ${ticksToShare} of the joiner's ticks`);
      await untilTicked(store, nodes, 3);

      const held = await holdings(store);
      assert.deepEqual(
        nodes.map((node) => held.get(node.keeper.nodeId)),
        [16, 16, 16, 16],
        'the fair share, and it stays',
      );
      const moves = (await store.db.selectFrom('lease_changes').select(['id', 'reason', 'to_node_id']).execute()).filter(
        (change) => !changesBefore.has(change.id),
      );
      assert.equal(fewestMoves, 16);
      assert.equal(moves.length, fewestMoves, 'exactly the surplus above the share moved, nothing more');
      assert.ok(
        moves.every((move) => move.reason === 'handed_over' && move.to_node_id === joiner.keeper.nodeId),
        'each straight to the new node',
      );
      assert.equal(events.filter((event) => event.kind === 'start' && event.at >= joinedAt).length, 16, 'and started once there');
      const gaps = await longestGaps(store, events, joinedAt);
      assert.ok(gaps.ownership < 1_000, `no number without an owner for 1 s (longest ${gaps.ownership} ms)`);
      assert.ok(gaps.session < 1_000, `nor without a running session (longest ${gaps.session} ms)`);
    } finally {
      await stopAll();
    }
  });
});
