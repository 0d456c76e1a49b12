import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import type { RemoteSandboxNetwork } from '../../../src/engines/sandbox/remote-sandbox-network.ts';
import { startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, uniquePhone } from '../../support/gateway.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';
import { serveTestNetwork, stopTestNetwork, testNetworkClient } from '../../support/shared-network.ts';
import { waitUntil } from '../../support/waiting.ts';

const SENDS = 24;

/** A node on the shared database and the shared sandbox network, with a short lease term so that a stopped node's numbers move at once. */
function startNode(database: TestDatabase, networkPort: number, name: string): Promise<ClusterNode> {
  return startClusterNode(database, name, { WAGW_LEASE_TTL_MS: '1500', WAGW_SANDBOX_NETWORK: `tcp://127.0.0.1:${networkPort}` });
}

// Issue 37, ADR 0062: a receipt is WhatsApp's word about a message, and WhatsApp keeps it for a
// device that is away. While a number moves between nodes it has no live connection for a moment
// (the old session stopped, the new one not yet started), and a receipt sent then must reach the
// message once the number is connected again, wherever that is. On SQLite the "next node" is the
// same gateway started again on the same file; on PostgreSQL it is another node.
for (const dialect of dialects) {
  describe(`receipts heard while a number moves between nodes reach their messages (${dialect})`, { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let network: Awaited<ReturnType<typeof serveTestNetwork>>;
    let reader: RemoteSandboxNetwork;
    const nodes: ClusterNode[] = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      network = await serveTestNetwork();
      reader = testNetworkClient(network.port);
    });
    afterEach(async () => {
      for (const node of nodes.splice(0)) await node.server.stop().catch(ignoreCleanupFailure);
    });
    after(async () => {
      await stopTestNetwork(network, reader);
      await database?.drop();
    });

    it('every delivery receipt of a stream sent while no node serves the number is recorded, by message id, once the next node does', async () => {
      const first = await startNode(database, network.port, 'first');
      nodes.push(first);
      const seeded = await seedAccount(first.gateway, { numbers: 1, plan: 'pro' });
      await first.gateway.supervisor.numberAdded();
      const number = await first.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      await waitUntil(() => first.gateway.keeper.leaseOf(number.id) !== undefined, 'the first node to serve the number');

      // A phone of the network that is away: it has connected before, so the network keeps what
      // is sent to it, and answers each send after its delivery wait without a receipt.
      const readerPhone = uniquePhone();
      await reader.expect(readerPhone);
      const sends = Array.from({ length: SENDS }, async (_, index) => {
        for (;;) {
          const response = await fetch(`${first.url}/send_message`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
            body: JSON.stringify({ from_phone: number.phone, to_phone: readerPhone, message: `receipt ${index}` }),
          });
          const body = await response.text();
          // On a loaded machine the node may miss a renewal and fence its session for a moment; a
          // 503 sent nothing ("nothing was done"), and a client retries it after its Retry-After.
          if (response.status === 503 && (JSON.parse(body) as { error?: string }).error === 'number_not_connected') {
            const retryAfterSeconds = Number(response.headers.get('retry-after'));
            assert.ok(retryAfterSeconds > 0, `a 503 carries Retry-After: ${body}`);
            await new Promise((resolve) => setTimeout(resolve, retryAfterSeconds * 1000));
            continue;
          }
          assert.equal(response.status, 200, body);
          return (JSON.parse(body) as { message_id: string }).message_id;
        }
      });
      const messageIds = await Promise.all(sends);

      // The first node stops: its session ends and its lease is released, and for now no node
      // serves the number. The phone comes back and stores every message meanwhile, so that all
      // their delivery receipts are sent in that gap...
      await first.server.stop();
      nodes.splice(0);
      const arrived: string[] = [];
      await reader.connect(readerPhone, 'reader', {
        incoming: async (message) => void arrived.push(message.id),
        receipt: async () => undefined,
        replaced: () => undefined,
      });
      await waitUntil(() => arrived.length === SENDS, 'the phone to store every message');

      // ...and reach their messages once the next node serves the number.
      const next = await startNode(database, network.port, 'next');
      nodes.push(next);
      await waitUntil(() => next.gateway.keeper.leaseOf(number.id) !== undefined, 'the next node to serve the number');
      const readStatuses = async () =>
        new Map(
          (await next.gateway.store.db.selectFrom('messages').select(['id', 'status']).where('id', 'in', messageIds).execute()).map(
            (row) => [row.id, row.status],
          ),
        );
      await waitUntil(
        async () => {
          const now = await readStatuses();
          return messageIds.every((id) => now.get(id) === 'delivered');
        },
        'every delivery receipt to reach its message',
        50,
      ).catch(async (error: unknown) => {
        const now = await readStatuses();
        const lost = messageIds.filter((id) => now.get(id) !== 'delivered');
        throw new Error(`${lost.length} of ${SENDS} delivery receipts were lost: ${lost.join(', ')}`, { cause: error });
      });
    });
  });
}
