import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { RemoteSandboxNetwork } from '../../src/engines/sandbox/remote-sandbox-network.ts';
import type { Store } from '../../src/store/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { seedAccount } from '../support/gateway.ts';
import { ignoreCleanupFailure } from '../support/ignore.ts';
import { TEST_SECRET_KEY_HEX, testNetworkClient } from '../support/shared-network.ts';
import { liveConnections, networkProcess, sentTextCounts } from './network-process.ts';
import { sleep, waitFor } from './raw-http.ts';
import { waitForValue } from '../support/waiting.ts';
import { RollingLoad } from './rolling-restart-load.ts';
import { freePort, killAllServerProcesses, openDatabase, startServerProcess, withGateway, type ServerProcess } from './server-process.ts';

const NODES = 3;
const NUMBERS = 21;
const ROUNDS = 2;
/** Short, so that handovers to a restarted node happen within the test; long enough for a busy CI machine's renewals. */
const TTL_MS = 4_000;
const KEYED_CLIENTS = 4;
const KEYLESS_CLIENTS = 4;
/** Load between two restarts, so that the restarted node takes numbers over and serves them. */
const SETTLE_MS = 1_000;

/**
 * The operator's weekly rolling restart (issue 37): three nodes on PostgreSQL with the shared
 * sandbox network, keyed and keyless clients sending without pause, and each node stopped with
 * SIGTERM and started again, in turn, twice. Every request must end 200 (a 503 is allowed only
 * as an answer the client retries after its Retry-After), and the network's journal must show
 * every message answered 200 exactly once and no other: none lost, none sent twice, however the
 * numbers moved between nodes meanwhile (a node giving a number up drains the sends already
 * with WhatsApp before its lease goes).
 */
describe('a rolling restart of three nodes under keyed and keyless load (postgres)', { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let network: ChildProcess | undefined;
  let networkClient: RemoteSandboxNetwork | undefined;
  let store: Store | undefined;
  let load: RollingLoad | undefined;

  before(async () => {
    database = await createTestDatabase('postgres');
  });

  after(async () => {
    await load?.stop().catch(ignoreCleanupFailure);
    await killAllServerProcesses();
    networkClient?.close();
    network?.kill('SIGKILL');
    await store?.close().catch(ignoreCleanupFailure);
    await database?.drop();
  });

  it('fails no request, loses no message and sends none twice, counted on the network', async () => {
    const networks = networkProcess(await freePort());
    network = await networks.start();
    networkClient = testNetworkClient(networks.port);
    const env = {
      WAGW_SECRET_KEY: TEST_SECRET_KEY_HEX,
      WAGW_SANDBOX_NETWORK: `tcp://127.0.0.1:${networks.port}`,
      WAGW_LEASE_TTL_MS: String(TTL_MS),
    };
    const start = (index: number) => startServerProcess(database.url, { ...env, WAGW_NODE_NAME: `node-${index}` });
    const nodes: ServerProcess[] = [];
    for (let index = 0; index < NODES; index++) nodes.push(await start(index));
    store = openDatabase(database.url);
    const db = store.db;
    const seeded = await withGateway(database.url, (gateway) => seedAccount(gateway, { numbers: NUMBERS, plan: 'enterprise' }), {
      WAGW_SECRET_KEY: TEST_SECRET_KEY_HEX,
    });

    const nodeIdOf = async (server: ServerProcess) =>
      (
        await db
          .selectFrom('cluster_nodes')
          .select('id')
          .where('pid', '=', server.pid)
          .orderBy('started_at', 'desc')
          .executeTakeFirstOrThrow()
      ).id;
    /** Every number held by a running node and connected on the network from it. */
    const allServed = async () => {
      const ids = new Set(await Promise.all(nodes.map(nodeIdOf)));
      const leases = await db
        .selectFrom('number_leases')
        .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'number_leases.number_id')
        .select(['phone', 'node_id'])
        .execute();
      const live = liveConnections(await networkClient!.journal());
      return (
        leases.length === NUMBERS &&
        leases.every((lease) => lease.node_id !== null && ids.has(lease.node_id) && live.get(lease.phone) === lease.node_id)
      );
    };
    const heldBy = async (server: ServerProcess) => {
      const id = await nodeIdOf(server);
      const row = await db
        .selectFrom('number_leases')
        .select((eb) => eb.fn.countAll<string>().as('held'))
        .where('node_id', '=', id)
        .executeTakeFirstOrThrow();
      return Number(row.held);
    };
    await waitFor(allServed, 30_000, 'every number served before the load');

    // Nodes in the load balancer's rotation: a node leaves it as it is told to stop, and
    // joins it once it answers its health check.
    const inRotation = new Set(nodes.map((node) => node.port));
    load = new RollingLoad(() => [...inRotation], seeded.apiKey, seeded.phones);
    load.start(KEYED_CLIENTS, KEYLESS_CLIENTS);
    await sleep(SETTLE_MS);

    const restarts: { node: number; stopMs: number; startMs: number; at: number; port: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let index = 0; index < NODES; index++) {
        const victim = nodes[index]!;
        const stoppedAt = Date.now();
        inRotation.delete(victim.port);
        victim.signalGroup('SIGTERM');
        const exit = await victim.exited;
        assert.equal(exit.code, 0, `a SIGTERM stops the node cleanly:\n${victim.output().slice(-4_000)}`);
        const startedAt = Date.now();
        nodes[index] = await start(index);
        inRotation.add(nodes[index]!.port);
        restarts.push({
          node: index,
          stopMs: startedAt - stoppedAt,
          startMs: Date.now() - startedAt,
          at: stoppedAt,
          port: nodes[index]!.port,
        });
        // The restarted node takes numbers over (handovers, which drain too) before the next stop.
        await waitFor(async () => (await heldBy(nodes[index]!)) > 0 && (await allServed()), 30_000, 'the restarted node to serve numbers');
        await sleep(SETTLE_MS);
      }
    }
    await load.stop();

    const journal = await networkClient.journal();
    const counts = sentTextCounts(journal);
    const lost = load.sent.filter((send) => counts.get(send.text) !== 1);
    const answered = new Set(load.sent.map((send) => send.text));
    const unanswered = [...counts].filter(([text]) => text.startsWith('roll-') && !answered.has(text));
    const twice = [...counts].filter(([, count]) => count > 1);
    const keyless = load.sent.filter((send) => !send.keyed).length;
    process.stderr.write(
      `rolling restart: ${load.sent.length} sends answered 200 (${keyless} keyless), ${load.retriedAfter503} 503s retried after Retry-After, ` +
        `${load.refusedConnections} refused connections retried, restarts ${JSON.stringify(restarts)}\n`,
    );
    if (load.failed.length > 0) {
      const clusterNodes = await db.selectFrom('cluster_nodes').select(['id', 'name', 'url', 'pid', 'started_at', 'stopped_at']).execute();
      const logs = nodes.map((node) => `--- ${node.port}\n${node.output().slice(-3_000)}`).join('\n');
      process.stderr.write(`nodes ${JSON.stringify(clusterNodes)}\n${logs}\n`);
    }
    assert.deepEqual(load.failed, [], 'no request failed');
    assert.ok(load.sent.length > 200 && keyless > 100, `the clients sent without pause (${load.sent.length}, ${keyless} keyless)`);
    assert.deepEqual(lost, [], 'every send answered 200 reached the network exactly once');
    assert.deepEqual(twice, [], 'no message reached the network twice');
    assert.deepEqual(unanswered, [], 'every message on the network was answered 200');
    const notDelivered = () =>
      db.selectFrom('messages').select(['text', 'status']).where('text', 'like', 'roll-%').where('status', '!=', 'delivered').execute();
    assert.deepEqual(
      (await notDelivered()).filter((row) => row.status !== 'sent'),
      [],
      'every message answered 200 is recorded sent (or delivered)',
    );
    // Every message the network took gets its receipt recorded, wherever its number moved
    // meanwhile: the network keeps a receipt until a connection of the number has stored it
    // (docs/adr/0062-receipts-kept-until-recorded.md). The last receipts may still be on their way.
    const stillSent = await waitForValue(
      async () => {
        const rows = await notDelivered();
        return rows.length === 0 ? rows : undefined;
      },
      'every message answered 200 to be recorded delivered',
      200,
    ).catch(async (error: unknown) => {
      const rows = await notDelivered();
      process.stderr.write(
        `rolling restart: ${rows.length} messages without their delivery receipt: ${JSON.stringify(rows.slice(0, 20))}\n`,
      );
      throw error;
    });
    assert.deepEqual(stillSent, []);
    assert.ok(nodes.every((node) => node.exitStatus() === undefined));
  });
});
