import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ChatwootStandIn } from '../../support/chatwoot-stand-in.ts';
import { callUntilAvailable, numberOwner, startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, type SeededAccount } from '../../support/gateway.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';
import { serveTestNetwork, stopTestNetwork } from '../../support/shared-network.ts';
import { waitForValue } from '../../support/waiting.ts';

// A Chatwoot inbox in a cluster: a number's messages reach Chatwoot whichever node owns it, and an
// agent's reply posted to the callback of a node that does not own the number is sent once, on the
// owner, reaches the person's phone once, and its ticks come back from whichever node records the
// receipts. The person is a number of the gateway too (another account's), so that the phone's
// side is seen and read as a person reads. Nodes share one PostgreSQL database; SQLite serves a
// single node.
describe('a Chatwoot inbox across the nodes of a cluster (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let nodes: ClusterNode[];
  let account: SeededAccount;
  let person: SeededAccount;
  let network: Awaited<ReturnType<typeof serveTestNetwork>>;
  let chatwoot: ChatwootStandIn;

  before(async () => {
    database = await createTestDatabase('postgres');
    network = await serveTestNetwork();
    chatwoot = await ChatwootStandIn.start();
    const env = {
      WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
      WAGW_WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,1,1,1,1,1',
      WAGW_SANDBOX_NETWORK: `tcp://127.0.0.1:${network.port}`,
    };
    nodes = [await startClusterNode(database, 'first', env), await startClusterNode(database, 'second', env)];
    account = await seedAccount(nodes[0]!.gateway, { scopes: ['read', 'send', 'webhooks'] });
    person = await seedAccount(nodes[0]!.gateway, { scopes: ['read', 'send'] });
  });
  after(async () => {
    for (const node of [...(nodes ?? [])].reverse()) await node.server.stop().catch(ignoreCleanupFailure);
    await database?.drop();
    if (network !== undefined) await stopTestNetwork(network).catch(ignoreCleanupFailure);
    await chatwoot?.close();
  });

  it("a person's message reaches Chatwoot, the reply posted to the other node's callback reaches their phone once, and its ticks follow", async () => {
    const owner = await numberOwner(nodes, account.phones[0]!);
    const other = nodes.find((node) => node !== owner)!;
    const get = (node: ClusterNode, path: string, key: string) =>
      fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    const call = async (node: ClusterNode, path: string, body: unknown, key?: string) =>
      fetch(`${node.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key !== undefined && { authorization: `Bearer ${key}` }) },
        body: JSON.stringify(body),
      });

    const made = await call(other, '/api/webhooks', chatwoot.inboxRequest(), account.apiKey);
    assert.equal(made.status, 201);
    const inbox = (await made.json()) as { chatwoot: { callback_path: string } };
    // Chatwoot calls the callback on the node that does not own the number.
    chatwoot.callback = async (payload) => {
      const answer = await call(other, inbox.chatwoot.callback_path, payload);
      return { status: answer.status, body: (await answer.json()) as unknown };
    };

    const phone = person.phones[0]!;
    const received = await callUntilAvailable(
      () => call(other, '/sandbox/receive', { from_phone: phone, to_phone: account.phones[0], message: 'hello' }, account.apiKey),
      'the message received',
    );
    assert.equal(received.status, 200, await received.text());
    const conversation = await waitForValue(() => {
      const contact = chatwoot.contacts.find((candidate) => candidate.phone_number === phone);
      const found = contact && chatwoot.conversations.find((candidate) => candidate.contactId === contact.id);
      return found !== undefined && chatwoot.messagesIn(found.id).length === 1 ? found : undefined;
    }, 'the message in Chatwoot');

    const reply = await chatwoot.agentReply(conversation.id, 'hello from support');
    const answer = chatwoot.callbackAnswers.at(-1) as { status: number; body: { message_id?: string } };
    assert.equal(answer.status, 200, JSON.stringify(answer));
    assert.match(answer.body.message_id ?? '', /^msg_/);
    const rows = await owner!.gateway.store.db
      .selectFrom('messages')
      .select(['id', 'text'])
      .where('account_id', '=', account.accountId)
      .where('direction', '=', 'outbound')
      .where('to_phone', '=', phone)
      .execute();
    assert.deepEqual(
      rows.map((row) => row.text),
      ['hello from support'],
      'sent once, through the owner',
    );

    // The phone has it once; reading it there turns the reply's ticks in Chatwoot to read.
    const atThePhone = await waitForValue(async () => {
      const answer = await get(other, `/api/messages?phone=${encodeURIComponent(phone)}&direction=inbound`, person.apiKey);
      const { messages } = (await answer.json()) as { messages: { message_id: string; message: string | null }[] };
      const replies = messages.filter((message) => message.message === 'hello from support');
      return replies.length > 0 ? replies : undefined;
    }, "the reply at the person's phone");
    assert.equal(atThePhone.length, 1, 'once');
    await waitForValue(
      () => (reply.statuses.includes('delivered') ? true : undefined),
      `the reply delivered in Chatwoot (${reply.statuses})`,
    );
    const read = await call(other, `/api/messages/${atThePhone[0]!.message_id}/read`, {}, person.apiKey);
    assert.equal(read.status, 200, await read.text());
    await waitForValue(() => (reply.status === 'read' ? true : undefined), `the reply read in Chatwoot (${reply.statuses})`);
    const ticks = reply.statuses.filter((status, index) => status !== reply.statuses[index - 1] && status !== 'sent');
    assert.deepEqual(ticks, ['delivered', 'read'], 'ticks only move forward');
    assert.deepEqual(chatwoot.violations, []);
  });
});
