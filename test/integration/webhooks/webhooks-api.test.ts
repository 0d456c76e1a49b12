import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook as SvixWebhook } from 'svix';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { eventually, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';

/**
 * Webhooks over the API (issue 43): a key with the `webhooks` scope manages them end to end
 * through the same service as the dashboard (address guard, limit, audit row); a key made as
 * before is refused every one with 403 missing_scope; another account's webhook is a 404.
 */

function headersOf(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
    ),
  );
}

for (const dialect of dialects) {
  describe(`webhooks over the API (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let owner: SeededAccount;
    let rival: SeededAccount;
    let ownerHooksKey: string;
    let rivalHooksKey: string;
    let pathCounter = 0;
    const freshPath = () => `/api-hook-${++pathCounter}`;

    const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, body?: unknown) =>
      test.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { payload: JSON.stringify(body) }),
      });
    const hooksKeyOf = async (account: SeededAccount) =>
      (await test.gateway.apiKeys.createKey({ accountId: account.accountId, name: 'hooks', scopes: ['webhooks'] })).plaintext;
    const auditRows = (accountId: string) =>
      test.gateway.store.db.selectFrom('audit_events').selectAll().where('account_id', '=', accountId).orderBy('id').execute();

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_WEBHOOKS_PER_ACCOUNT: '3' }));
      receiver = await WebhookReceiver.start();
      owner = await seedAccount(test.gateway);
      rival = await seedAccount(test.gateway);
      ownerHooksKey = await hooksKeyOf(owner);
      rivalHooksKey = await hooksKeyOf(rival);
    });
    after(async () => {
      await test.gateway.deliveryWorker.stop();
      await receiver.close();
      await test.close();
    });

    it('a key made as before is refused every webhook operation with 403 naming the webhooks scope, at both paths', async () => {
      const probes: Array<['GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?]> = [
        ['GET', '/webhooks'],
        ['POST', '/webhooks', { url: receiver.url(), events: ['message'] }],
        ['GET', '/webhooks/wh_x'],
        ['PATCH', '/webhooks/wh_x', { enabled: false }],
        ['DELETE', '/webhooks/wh_x'],
        ['POST', '/webhooks/wh_x/rotate_secret'],
        ['POST', '/webhooks/wh_x/test'],
        ['GET', '/webhooks/wh_x/deliveries'],
        ['POST', '/webhooks/wh_x/deliveries/dlv_x/redeliver'],
      ];
      for (const [method, path, body] of probes) {
        for (const prefix of ['', '/api']) {
          const refused = await call(method, `${prefix}${path}`, owner.apiKey, body);
          assert.equal(refused.statusCode, 403, `${method} ${prefix}${path}: ${refused.body}`);
          assert.deepEqual(refused.json().meta, { required_scope: 'webhooks', key_scopes: ['read', 'send'] });
        }
      }
      assert.equal((await test.gateway.webhooks.listWebhooks(accountScope(owner.accountId))).length, 0);
    });

    it('a webhooks key creates, reads, changes, tests, rotates and deletes a webhook, and svix and standardwebhooks verify its deliveries', async () => {
      const path = freshPath();
      const created = await call('POST', '/api/webhooks', ownerHooksKey, {
        url: receiver.url(path),
        events: ['message', 'message.status'],
        description: 'n8n trigger',
      });
      assert.equal(created.statusCode, 201, created.body);
      const webhook = created.json();
      assert.match(webhook.id, /^wh_/);
      assert.match(webhook.secret, /^whsec_/);
      assert.deepEqual(
        { events: webhook.events, description: webhook.description, enabled: webhook.enabled, message_scope: webhook.message_scope },
        { events: ['message', 'message.status'], description: 'n8n trigger', enabled: true, message_scope: 'direct' },
      );

      const listed = await call('GET', '/webhooks', ownerHooksKey);
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(
        listed.json().webhooks.map((listedHook: { id: string }) => listedHook.id),
        [webhook.id],
      );
      assert.ok(!listed.body.includes(webhook.secret), 'the secret is never listed');
      assert.equal((await call('GET', `/webhooks/${webhook.id}`, ownerHooksKey)).json().url, receiver.url(path));

      const changed = await call('PATCH', `/webhooks/${webhook.id}`, ownerHooksKey, { events: ['message'], description: null });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.deepEqual(
        { events: changed.json().events, description: changed.json().description },
        { events: ['message'], description: null },
      );

      // A test event, verified as a receiver using either library would.
      assert.equal((await call('POST', `/webhooks/${webhook.id}/test`, ownerHooksKey)).statusCode, 202);
      const [first] = await receiver.waitForRequests(1, (request) => request.path === path);
      // svix's verify throws on a bad signature and answers nothing on a good one.
      assert.doesNotThrow(() => new SvixWebhook(webhook.secret).verify(first!.body, headersOf(first!)));
      assert.throws(() => new SvixWebhook(webhook.secret).verify(`${first!.body} `, headersOf(first!)));
      assert.equal(JSON.parse(first!.body).event, 'test');
      assert.equal((new StandardWebhook(webhook.secret).verify(first!.body, headersOf(first!)) as { event: string }).event, 'test');

      // Deliveries with their attempts, then one sent again under the same webhook-id.
      const deliveries = await eventually(async () => {
        const answer = (await call('GET', `/webhooks/${webhook.id}/deliveries?limit=5`, ownerHooksKey)).json();
        return answer.deliveries[0]?.state === 'delivered' ? answer.deliveries : undefined;
      }, 'the test delivery to be recorded as delivered');
      assert.equal(deliveries.length, 1);
      assert.equal(deliveries[0].attempts.length, 1);
      assert.equal(deliveries[0].attempts[0].status_code, 200);
      assert.equal(deliveries[0].id, first!.headers['webhook-id'], 'the delivery id is the webhook-id header');
      const redelivered = await call('POST', `/api/webhooks/${webhook.id}/deliveries/${deliveries[0].id}/redeliver`, ownerHooksKey);
      assert.equal(redelivered.statusCode, 202, redelivered.body);
      assert.equal(redelivered.json().id, deliveries[0].id);
      const [, again] = await receiver.waitForRequests(2, (request) => request.path === path);
      assert.equal(again!.headers['webhook-id'], first!.headers['webhook-id']);

      // A rotated secret is shown once, and the next delivery verifies with it alone.
      const rotated = await call('POST', `/webhooks/${webhook.id}/rotate_secret`, ownerHooksKey);
      assert.equal(rotated.statusCode, 200);
      const { secret } = rotated.json();
      assert.ok(secret !== webhook.secret && /^whsec_/.test(secret));
      await call('POST', `/webhooks/${webhook.id}/test`, ownerHooksKey);
      const [, , third] = await receiver.waitForRequests(3, (request) => request.path === path);
      assert.doesNotThrow(() => new SvixWebhook(secret).verify(third!.body, headersOf(third!)));
      assert.equal(JSON.parse(third!.body).event, 'test');

      const deleted = await call('DELETE', `/webhooks/${webhook.id}`, ownerHooksKey);
      assert.equal(deleted.statusCode, 200);
      assert.equal((await call('GET', `/webhooks/${webhook.id}`, ownerHooksKey)).statusCode, 404);

      const actions = (await auditRows(owner.accountId)).filter(
        (row) => row.target_id === webhook.id || row.target_id === deliveries[0].id,
      );
      assert.deepEqual(
        actions.map((row) => row.action),
        [
          'webhook.created',
          'webhook.updated',
          'webhook.test_sent',
          'webhook.delivery_redelivered',
          'webhook.secret_rotated',
          'webhook.test_sent',
          'webhook.deleted',
        ],
      );
      for (const row of actions) {
        assert.equal(row.actor_kind, 'api_key');
        assert.match(row.actor_label ?? '', /^hooks \(wagw_live_sk_…[0-9a-f]{4}\)$/);
        assert.ok(row.actor_id?.startsWith('key_'));
        assert.equal(row.source_address, '127.0.0.1');
        assert.ok(!JSON.stringify(row).includes(secret) && !JSON.stringify(row).includes(webhook.secret), 'no secret in the log');
      }
    });

    it("another account's webhook and delivery are a 404 to every operation, and are left as they were", async () => {
      const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(owner.accountId), {
        url: receiver.url(freshPath()),
        eventTypes: ['message'],
      });
      await test.gateway.webhooks.sendTestEvent(operatorScope(), webhook.id);
      const [delivery] = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
      const probes: Array<['GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?]> = [
        ['GET', `/webhooks/${webhook.id}`],
        ['PATCH', `/webhooks/${webhook.id}`, { enabled: false }],
        ['POST', `/webhooks/${webhook.id}/rotate_secret`],
        ['POST', `/webhooks/${webhook.id}/test`],
        ['GET', `/webhooks/${webhook.id}/deliveries`],
        ['POST', `/webhooks/${webhook.id}/deliveries/${delivery!.delivery.id}/redeliver`],
        ['DELETE', `/webhooks/${webhook.id}`],
      ];
      const auditBefore = (await auditRows(owner.accountId)).length;
      for (const [method, path, body] of probes) {
        const refused = await call(method, path, rivalHooksKey, body);
        assert.equal(refused.statusCode, 404, `${method} ${path}: ${refused.body}`);
        assert.equal(refused.json().error, 'webhook_not_found');
      }
      assert.deepEqual((await call('GET', '/webhooks', rivalHooksKey)).json().webhooks, []);
      const after = await test.gateway.webhooks.getWebhook(operatorScope(), webhook.id);
      assert.deepEqual({ enabled: after.enabled, updatedAt: after.updatedAt }, { enabled: true, updatedAt: webhook.updatedAt });
      assert.equal((await auditRows(owner.accountId)).length, auditBefore, 'nothing was done, so nothing was logged');
      // A delivery of one webhook is not found through another of the same account.
      const { webhook: sibling } = await test.gateway.webhooks.createWebhook(accountScope(owner.accountId), {
        url: receiver.url(freshPath()),
        eventTypes: ['message'],
      });
      const crossed = await call('POST', `/webhooks/${sibling.id}/deliveries/${delivery!.delivery.id}/redeliver`, ownerHooksKey);
      assert.equal(crossed.statusCode, 404);
      assert.equal(crossed.json().error, 'delivery_not_found');
      await test.gateway.webhooks.deleteWebhook(operatorScope(), webhook.id);
      await test.gateway.webhooks.deleteWebhook(operatorScope(), sibling.id);
    });

    it('bad input is a 4xx with the documented body: an unknown field, no events, an unknown event, a blocked address, the limit', async () => {
      const cases: Array<[unknown, number, string, string | undefined]> = [
        [{ url: receiver.url(), events: ['message'], secret: 'mine' }, 400, 'invalid_request', 'secret'],
        [{ url: receiver.url(), events: [] }, 400, 'invalid_request', 'events'],
        [{ url: receiver.url(), events: ['message.unknown'] }, 400, 'invalid_request', undefined],
        [{ url: 'ftp://example.com/hook', events: ['message'] }, 400, 'invalid_webhook_url', undefined],
        [{ url: receiver.url(), events: ['message'], description: 'x'.repeat(501) }, 400, 'invalid_request', 'description'],
      ];
      for (const [body, status, error, field] of cases) {
        const refused = await call('POST', '/webhooks', rivalHooksKey, body);
        assert.equal(refused.statusCode, status, refused.body);
        const envelope = refused.json();
        assert.equal(envelope.error, error, refused.body);
        assert.equal(typeof envelope.message, 'string');
        assert.equal(typeof envelope.request_id, 'string');
        if (field !== undefined) assert.equal(envelope.meta?.field, field, refused.body);
      }
      const emptyPatch = await call('PATCH', '/webhooks/wh_x', rivalHooksKey, {});
      assert.equal(emptyPatch.statusCode, 400);
      for (let index = 0; index < 3; index++) {
        assert.equal(
          (await call('POST', '/webhooks', rivalHooksKey, { url: receiver.url(freshPath()), events: ['message'] })).statusCode,
          201,
        );
      }
      const over = await call('POST', '/webhooks', rivalHooksKey, { url: receiver.url(freshPath()), events: ['message'] });
      assert.equal(over.statusCode, 409);
      assert.deepEqual([over.json().error, over.json().meta], ['webhook_limit_reached', { limit: 3 }]);
      const created = (await auditRows(rival.accountId)).filter((row) => row.action === 'webhook.created');
      assert.equal(created.length, 3, 'a refused creation leaves no audit row');
    });
  });
}

describe('the address guard holds for webhooks made over the API', () => {
  let test: TestGateway;
  before(async () => {
    test = await startDeliveringGateway('sqlite', {});
  });
  after(async () => {
    await test.gateway.deliveryWorker.stop();
    await test.close();
  });

  it('a URL that resolves only to loopback is refused with webhook_url_blocked, naming the host', async () => {
    const account = await seedAccount(test.gateway);
    const key = (await test.gateway.apiKeys.createKey({ accountId: account.accountId, scopes: ['webhooks'] })).plaintext;
    const refused = await test.post('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['message'] }, key);
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error, 'webhook_url_blocked');
    assert.equal(refused.json().meta.host, '127.0.0.1');
  });
});
