import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ChatwootStandIn } from '../../support/chatwoot-stand-in.ts';
import { callUntilAvailable, numberOwner, startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type SeededAccount } from '../../support/gateway.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';
import { serveTestNetwork, stopTestNetwork } from '../../support/shared-network.ts';
import { waitForValue } from '../../support/waiting.ts';

// A Chatwoot inbox in a cluster: a number's messages reach Chatwoot whichever node owns it, and an
// agent's reply posted to the callback of a node that does not own the number is sent once, on the
// owner. Nodes share one PostgreSQL database; SQLite serves a single node.
describe('a Chatwoot inbox across the nodes of a cluster (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let nodes: ClusterNode[];
  let account: SeededAccount;
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
  });
  after(async () => {
    for (const node of [...(nodes ?? [])].reverse()) await node.server.stop().catch(ignoreCleanupFailure);
    await database?.drop();
    if (network !== undefined) await stopTestNetwork(network).catch(ignoreCleanupFailure);
    await chatwoot?.close();
  });

  it("a person's message reaches Chatwoot, and the reply posted to the other node's callback reaches them once", async () => {
    const owner = await numberOwner(nodes, account.phones[0]!);
    const other = nodes.find((node) => node !== owner)!;
    const call = async (node: ClusterNode, path: string, body: unknown, key?: string) =>
      fetch(`${node.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key !== undefined && { authorization: `Bearer ${key}` }) },
        body: JSON.stringify(body),
      });

    const made = await call(
      other,
      '/api/webhooks',
      {
        url: chatwoot.baseUrl,
        events: ['message', 'message.status'],
        chatwoot: { account_id: chatwoot.accountId, inbox_id: chatwoot.inboxId, api_access_token: chatwoot.apiAccessToken },
      },
      account.apiKey,
    );
    assert.equal(made.status, 201);
    const inbox = (await made.json()) as { chatwoot: { callback_path: string } };
    // Chatwoot calls the callback on the node that does not own the number.
    chatwoot.callback = async (payload) => {
      const answer = await call(other, inbox.chatwoot.callback_path, payload);
      return { status: answer.status, body: (await answer.json()) as unknown };
    };

    const person = uniquePhone();
    const received = await callUntilAvailable(
      () => call(other, '/sandbox/receive', { from_phone: person, to_phone: account.phones[0], message: 'hello' }, account.apiKey),
      'the message received',
    );
    assert.equal(received.status, 200, await received.text());
    const conversation = await waitForValue(() => {
      const contact = chatwoot.contacts.find((candidate) => candidate.phone_number === person);
      const found = contact && chatwoot.conversations.find((candidate) => candidate.contactId === contact.id);
      return found !== undefined && chatwoot.messagesIn(found.id).length === 1 ? found : undefined;
    }, 'the message in Chatwoot');

    await chatwoot.agentReply(conversation.id, 'hello from support');
    const answer = chatwoot.callbackAnswers.at(-1) as { status: number; body: { message_id?: string } };
    assert.equal(answer.status, 200, JSON.stringify(answer));
    assert.match(answer.body.message_id ?? '', /^msg_/);
    const rows = await owner!.gateway.store.db
      .selectFrom('messages')
      .select(['id', 'text'])
      .where('account_id', '=', account.accountId)
      .where('direction', '=', 'outbound')
      .where('to_phone', '=', person)
      .execute();
    assert.deepEqual(
      rows.map((row) => row.text),
      ['hello from support'],
      'sent once, through the owner',
    );
    assert.deepEqual(chatwoot.violations, []);
  });
});
