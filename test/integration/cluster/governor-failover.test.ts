import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount } from '../../support/gateway.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';

type Node = ClusterNode;

function startNode(database: TestDatabase, name: string): Promise<Node> {
  return startClusterNode(database, name, { WAGW_LEASE_TTL_MS: '1500', WAGW_OWNER_WAIT_MS: '600', WAGW_SEND_QUEUE_CHECK_MS: '300' });
}

type Journal = { journal(): { kind: string; id?: string; node: string }[] };

// The queue follows its number from node to node on one PostgreSQL database.
describe("a number's send queue after its owner stops (postgres)", { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let nodes: Node[];

  before(async () => {
    database = await createTestDatabase('postgres');
    nodes = [await startNode(database, 'first'), await startNode(database, 'second')];
  });
  after(async () => {
    for (const node of nodes ?? []) await node.server.stop().catch(ignoreCleanupFailure);
    await database?.drop();
  });

  it('the new owner sends every queued message at its time, each once', async () => {
    const seeded = await seedAccount(nodes[0]!.gateway, { numbers: 1, plan: 'pro' });
    const numberId = (await nodes[0]!.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!)).id;
    let holder: Node | undefined;
    for (let attempt = 0; attempt < 300 && holder === undefined; attempt++) {
      holder = nodes.find((node) => node.gateway.keeper.leaseOf(numberId) !== undefined);
      if (holder === undefined) {
        await Promise.all(nodes.map((node) => node.gateway.keeper.tickSoon()));
        await sleep(50);
      }
    }
    assert.ok(holder, 'a node holds the number');
    const successor = nodes.find((node) => node !== holder)!;
    const sendAt = new Date(Date.now() + 3_000).toISOString();
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      const response = await fetch(`${holder.url}/send_message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
        body: JSON.stringify({
          from_phone: seeded.phones[0],
          to_phone: `+1415555012${index}`,
          message: `queued #${index}`,
          send_at: sendAt,
        }),
      });
      assert.equal(response.status, 202, await response.clone().text());
      ids.push(((await response.json()) as { message_id: string }).message_id);
    }
    await holder.server.stop();
    nodes = nodes.filter((node) => node !== holder);

    const deadline = Date.now() + 30_000;
    let rows: { id: string; status: string; engine_message_id: string | null }[] = [];
    while (Date.now() < deadline) {
      await successor.gateway.keeper.tickSoon();
      rows = await successor.gateway.store.db
        .selectFrom('messages')
        .select(['id', 'status', 'engine_message_id'])
        .where('id', 'in', ids)
        .execute();
      if (rows.every((row) => row.status !== 'queued')) break;
      await sleep(100);
    }
    for (const row of rows) assert.match(row.status, /^(sent|delivered)$/, `${row.id} is ${row.status}`);
    const sent = (successor.gateway.sandboxNetwork as unknown as Journal)
      .journal()
      .filter((entry) => entry.kind === 'send' && rows.some((row) => row.engine_message_id === entry.id));
    assert.equal(sent.length, 3, 'each sent once, by the new owner');
    assert.ok(sent.every((entry) => entry.node === successor.gateway.keeper.nodeId));
  });
});
