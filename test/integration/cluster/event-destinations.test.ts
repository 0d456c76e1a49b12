import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type ChannelModel, type GetMessage } from 'amqplib';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type SeededAccount } from '../../support/gateway.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';
import { ThrowawayRabbitmq } from '../../support/rabbitmq.ts';
import { serveTestNetwork, stopTestNetwork } from '../../support/shared-network.ts';
import { openStream } from '../../support/stream-client.ts';
import { sleep, waitForValue } from '../../support/waiting.ts';

const EXCHANGE = 'wagw.cluster';

/** Which node holds each of the numbers, once each is held by exactly one; nodes are ticked until then. */
async function ownersOf(nodes: readonly ClusterNode[], numberIds: readonly string[]): Promise<ClusterNode[]> {
  return waitForValue(async () => {
    await Promise.all(nodes.map((node) => node.gateway.keeper.tickSoon()));
    const owners = numberIds.map((id) => nodes.filter((node) => node.gateway.keeper.leaseOf(id) !== undefined));
    return owners.every((holders) => holders.length === 1) ? owners.map((holders) => holders[0]!) : undefined;
  }, 'each number held by one node');
}

/**
 * A message received by one of the account's numbers, through `via`'s HTTP API (forwarded to the
 * number's owner). A number whose session is still connecting answers 503, which nothing received;
 * the client tries again after its Retry-After, as a client does.
 */
async function receiveThrough(via: ClusterNode, account: SeededAccount, toPhone: string, message: string): Promise<void> {
  const from = uniquePhone();
  await waitForValue(async () => {
    const response = await fetch(`${via.url}/sandbox/receive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
      body: JSON.stringify({ from_phone: from, to_phone: toPhone, message }),
    });
    const text = await response.text();
    if (response.status === 503) {
      await sleep(Number(response.headers.get('retry-after')) * 1000);
      return undefined;
    }
    assert.equal(response.status, 200, text);
    return true;
  }, `${toPhone} to receive "${message}"`);
}

// Destinations in a cluster: the stream's client and the broker see the events of every number,
// whichever node owns it and whichever node the client reached. Nodes share one PostgreSQL
// database; SQLite serves a single node.
describe('event streams and RabbitMQ sinks across the nodes of a cluster (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let nodes: ClusterNode[];
  let account: SeededAccount;
  let owners: ClusterNode[];
  let network: Awaited<ReturnType<typeof serveTestNetwork>>;

  before(async () => {
    database = await createTestDatabase('postgres');
    // One sandbox network for both nodes, as a cluster has: a number's session reaches it from whichever node owns it.
    network = await serveTestNetwork();
    const env = {
      WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
      WAGW_WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,1,1,1,1,1',
      WAGW_SANDBOX_NETWORK: `tcp://127.0.0.1:${network.port}`,
    };
    nodes = [await startClusterNode(database, 'first', env), await startClusterNode(database, 'second', env)];
    account = await seedAccount(nodes[0]!.gateway, { numbers: 4, scopes: ['read', 'send', 'webhooks'] });
    const ids = await Promise.all(
      account.phones.map(async (phone) => (await nodes[0]!.gateway.numbers.findNumber(operatorScope(), phone)).id),
    );
    // Four numbers over two nodes: either node may take them all, so the test asks which.
    owners = await ownersOf(nodes, ids);
  });
  after(async () => {
    for (const node of [...(nodes ?? [])].reverse()) await node.server.stop().catch(ignoreCleanupFailure);
    await database?.drop();
    if (network !== undefined) await stopTestNetwork(network).catch(ignoreCleanupFailure);
  });

  it("a stream held on one node sends the events of numbers another node owns, once each, in each number's order", async () => {
    const made = await nodes[0]!.gateway.webhooks.createWebhook(accountScope(account.accountId), { stream: true, eventTypes: ['message'] });
    // The client is on a node that does not own the first number: its events commit elsewhere.
    const far = nodes.find((node) => node !== owners[0])!;
    const client = await openStream(far.url, made.webhook.url, account.apiKey);
    const sent: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [index, phone] of account.phones.entries()) {
        const text = `stream ${index} ${round}`;
        sent.push(text);
        await receiveThrough(nodes[round % 2]!, account, phone, text);
      }
    }
    const frames = await client.framesAtLeast(sent.length);
    const texts = frames.map((frame) => String(frame.message));
    assert.deepEqual([...texts].sort(), [...sent].sort(), 'every event once');
    assert.equal(new Set(frames.map((frame) => frame.event_id)).size, frames.length);
    for (const index of account.phones.keys()) {
      const ofNumber = texts.filter((text) => text.startsWith(`stream ${index} `));
      assert.deepEqual(
        ofNumber,
        [0, 1, 2].map((round) => `stream ${index} ${round}`),
        `number ${index}'s events in order`,
      );
    }
    // The other node takes the stream; the events since the last id seen reach it there.
    const last = frames.at(-1)!.event_id;
    await client.close();
    await receiveThrough(owners[0]!, account, account.phones[0]!, 'while away');
    const near = owners[0]!;
    const back = await openStream(near.url, `${made.webhook.url}?last_event_id=${last}`, account.apiKey);
    assert.deepEqual(
      (await back.framesAtLeast(1)).map((frame) => frame.message),
      ['while away'],
    );
    await back.close();
  });

  it('a RabbitMQ sink gets the events of numbers on every node, once each by message_id', async () => {
    const broker = await ThrowawayRabbitmq.start();
    let consumer: ChannelModel | undefined;
    try {
      consumer = await connect(broker.url);
      const channel = await consumer.createChannel();
      await channel.assertExchange(EXCHANGE, 'topic', { durable: true });
      const queue = `cluster.${uniquePhone()}`;
      await channel.assertQueue(queue, { durable: true });
      await channel.bindQueue(queue, EXCHANGE, `${queue}.#`);
      await nodes[1]!.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: broker.url,
        eventTypes: ['message'],
        rabbitmq: { exchange: EXCHANGE, routingKey: `${queue}.{event}.{number}` },
      });
      const sent = account.phones.map((_phone, index) => `sink ${index}`);
      for (const [index, phone] of account.phones.entries()) await receiveThrough(nodes[index % 2]!, account, phone, sent[index]!);
      const got: GetMessage[] = [];
      const byId = await waitForValue(async () => {
        for (
          let message = await channel.get(queue, { noAck: true });
          message !== false;
          message = await channel.get(queue, { noAck: true })
        ) {
          got.push(message);
        }
        const unique = new Map(got.map((message) => [message.properties.messageId as string, message]));
        return unique.size >= sent.length ? unique : undefined;
      }, 'every event in the queue');
      const texts = [...byId.values()].map((message) => String((JSON.parse(message.content.toString()) as { message: string }).message));
      assert.deepEqual(texts.sort(), [...sent].sort());
      await channel.close();
    } finally {
      await consumer?.close().catch(ignoreCleanupFailure);
      await broker.close();
    }
  });
});
