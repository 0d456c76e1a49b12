import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { loadConfig } from '../../../src/config.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { until } from '../../support/leases.ts';
import { seedAccount } from '../../support/gateway.ts';
import { serveTestNetwork, stopTestNetwork, TEST_SECRET_KEY_HEX } from '../../support/shared-network.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';

const TTL_MS = 1_500;
const STALE_LINE = 'refused a write from a session whose lease is stale';

interface Node {
  gateway: Gateway;
  logLines: string[];
}

/** A node's gateway with its sessions running, on the shared database and sandbox network. */
async function startNode(database: TestDatabase, networkPort: number, name: string): Promise<Node> {
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'debug',
    WAGW_SECRET_KEY: TEST_SECRET_KEY_HEX,
    WAGW_NODE_NAME: name,
    WAGW_LEASE_TTL_MS: String(TTL_MS),
    WAGW_SANDBOX_NETWORK: `tcp://127.0.0.1:${networkPort}`,
  });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const gateway = await createGateway(config, createLogger(config, sink));
  await gateway.runtime.startSessions();
  return { gateway, logLines };
}

const staleCount = async (node: Node) =>
  Number(/^wagw_stale_lease_writes_refused_total (\d+)$/m.exec(await node.gateway.metrics.render())?.[1]);

// The stale-write counter means a node was paused or cut off and stood down. A node that gives
// numbers up of its own accord (a clean stop, a handover to a node that joined) is neither, and
// its sessions' last words after the release are expected, not alarms.
describe("numbers given up of a node's own accord raise no stale-write alarm (postgres)", { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let network: Awaited<ReturnType<typeof serveTestNetwork>>;
  const nodes: Node[] = [];

  before(async () => {
    database = await createTestDatabase('postgres');
    network = await serveTestNetwork();
  });
  after(async () => {
    for (const node of nodes) {
      await node.gateway.keeper.stop().catch(ignoreCleanupFailure);
      await node.gateway.close().catch(ignoreCleanupFailure);
    }
    await stopTestNetwork(network);
    await database?.drop();
  });

  it('a handover to a joining node and a clean stop leave the counter at 0 and log no alarm, late writes included', async () => {
    const first = await startNode(database, network.port, 'first');
    nodes.push(first);
    const seeded = await seedAccount(first.gateway, { numbers: 6 });
    await first.gateway.supervisor.numberAdded();
    await until(() => first.gateway.keeper.heldCount() === 6, 'the first node to hold every number');
    const numbers = await Promise.all(seeded.phones.map((phone) => first.gateway.numbers.findNumber(operatorScope(), phone)));
    const leasesBefore = new Map(numbers.map((number) => [number.id, first.gateway.keeper.leaseOf(number.id)!]));

    const second = await startNode(database, network.port, 'second');
    nodes.push(second);
    await until(
      () => second.gateway.keeper.heldCount() === 3 && first.gateway.keeper.heldCount() === 3,
      'the handover of half the numbers',
    );
    const handedOver = numbers.find((number) => first.gateway.keeper.leaseOf(number.id) === undefined)!;
    const kept = numbers.find((number) => first.gateway.keeper.leaseOf(number.id) !== undefined)!;
    // A session's last word, written after its number was handed over: refused, and expected.
    await first.gateway.supervisor.recordSessionStatus({
      lease: leasesBefore.get(handedOver.id)!,
      phone: handedOver.phone,
      status: 'conflict',
      reason: 'late',
    });

    await first.gateway.keeper.stop();
    await until(() => second.gateway.keeper.heldCount() === 6, 'the second node to take every number after the clean stop');
    await first.gateway.receiver.recordReceipt({
      lease: leasesBefore.get(kept.id)!,
      phone: kept.phone,
      engineMessageId: 'sbx_late',
      status: 'read',
      errorCode: null,
      at: new Date(),
    });
    await first.gateway.supervisor.recordSessionStatus({
      lease: leasesBefore.get(kept.id)!,
      phone: kept.phone,
      status: 'conflict',
      reason: 'late',
    });
    // Late events of the stopped sessions (a replaced connection, a receipt) come within moments.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS));

    for (const number of [handedOver, kept]) {
      assert.equal(
        (await second.gateway.numbers.findNumber(operatorScope(), number.id)).status,
        'connected',
        'the late writes were refused',
      );
    }
    for (const node of [first, second]) {
      assert.equal(await staleCount(node), 0, node.logLines.filter((line) => line.includes('stale')).join(''));
      assert.equal(node.logLines.filter((line) => line.includes(STALE_LINE)).length, 0);
    }
  });
});
