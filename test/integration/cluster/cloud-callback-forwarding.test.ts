/**
 * Meta calls whichever node its callback URL reaches (docs/cloud-api.md, ADR 0076): a node that
 * does not serve the Cloud API number hands the delivery, byte for byte, to the one that does,
 * which checks X-Hub-Signature-256 over those bytes and stores it under its lease.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { addCloudNumber, assertRecordedOnce, connectCloudNumber } from '../../support/cloud-number.ts';
import { numberOwner, startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, uniquePhone } from '../../support/gateway.ts';
import { cloudCallback, GraphApiStandIn, incomingText, signedHeaders, type StandInPhone } from '../../support/graph-api-stand-in.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

const APP_SECRET = 'cloud-app-secret-for-the-cluster';

// Two nodes share one database only on PostgreSQL; SQLite serves a single node, whose callbacks
// test/integration/http/cloud-api.test.ts covers.
describe("Meta's callback reaching a node that does not serve the Cloud API number (postgres)", {
  skip: !dialects.includes('postgres'),
}, () => {
  let database: TestDatabase;
  let standIn: GraphApiStandIn;
  let receiver: WebhookReceiver;
  const nodes: ClusterNode[] = [];
  let phone: StandInPhone;
  let numberId: string;
  let cloudPhone: string;

  before(async () => {
    database = await createTestDatabase('postgres');
    standIn = await GraphApiStandIn.start();
    receiver = await WebhookReceiver.start();
    const env = webhookEnv({ WAGW_CLOUD_API_URL: standIn.url });
    nodes.push(await startClusterNode(database, 'first', env));
    const { gateway } = nodes[0]!;
    const account = await seedAccount(gateway);
    await gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url(), eventTypes: ['message'] });
    ({ numberId, cloudPhone, phone } = await addCloudNumber(gateway, account.accountId, standIn, APP_SECRET));
    nodes.push(await startClusterNode(database, 'second', env));
  });
  after(async () => {
    for (const node of nodes.reverse()) await node.server.stop().catch(ignoreCleanupFailure);
    await receiver?.close();
    await standIn?.close();
    await database?.drop();
  });

  it("is handed to the owner, bytes unchanged, and reaches the account's webhook once", async () => {
    const owner = await numberOwner(nodes, cloudPhone);
    const other = nodes.find((node) => node !== owner)!;
    await connectCloudNumber(owner.gateway, numberId);
    assert.equal(other.gateway.keeper.leaseOf(numberId), undefined, 'the other node does not serve the number');

    const person = uniquePhone();
    const message = incomingText(person.slice(1), 'through the other node');
    // Meta's bytes as Meta writes them: spacing that a parse and a re-serialisation would lose.
    const body = cloudCallback(phone, { messages: [message] }).replace('{"object"', '{ "object"');
    const post = (headers: Record<string, string>) =>
      fetch(`${other.url}/api/cloud/callbacks/${numberId}`, { method: 'POST', headers, body });
    const forged = await post(signedHeaders('not-the-app-secret', body));
    assert.deepEqual([forged.status, ((await forged.json()) as { error: string }).error], [401, 'invalid_webhook_signature']);
    const answer = await post(signedHeaders(APP_SECRET, body));
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.deepEqual(await answer.json(), { received: true });

    await assertRecordedOnce(owner.gateway, receiver, message, 'through the other node');
  });
});
