import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { API_KEY_PATTERN, apiKeyHint } from '../../../src/domain/api-key.ts';
import type { AppError } from '../../../src/domain/errors.ts';
import type { UserRole } from '../../../src/domain/model.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { eventually, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const PASSWORD = 'correct horse battery';

function inputValue(html: string, id: string): string | undefined {
  return new RegExp(`<input id="${id}"[^>]*value="([^"]*)"`).exec(html)?.[1];
}

function webhookIdFrom(location: string | undefined): string {
  const id = /^\/webhooks\/(wh_[0-9a-z]+)$/.exec(location ?? '')?.[1];
  assert.ok(id, `redirected to a webhook page, not ${location}`);
  return id;
}

/** A client signed in as a new user of the account. */
async function signedIn(test: TestGateway, accountId: string, email: string, role: UserRole): Promise<DashboardClient> {
  await createTestUser(test.gateway, { accountId, email, password: PASSWORD, role });
  const client = new DashboardClient(test);
  assert.equal((await client.signIn(email, PASSWORD)).statusCode, 303);
  return client;
}

for (const dialect of dialects) {
  describe(`dashboard API keys and webhooks (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let accountId: string;
    let rivalAccountId: string;
    let sandboxPhone: string;
    let owner: DashboardClient;
    let member: DashboardClient;
    let pathCounter = 0;

    /** A receiver path of the test's own, so that tests sharing the receiver never see each other's requests. */
    const freshPath = () => `/dashboard-hook-${++pathCounter}`;
    const send = (apiKey: string) =>
      test.post('/send_message', { from_phone: sandboxPhone, to_phone: uniquePhone(), message: 'hi' }, apiKey);
    const countKeys = async () => (await test.gateway.apiKeys.listKeys(accountId)).length;

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv());
      receiver = await WebhookReceiver.start();
      receiver.responder = (request) =>
        request.path.endsWith('-html') ? { status: 200, body: '<script>alert(1)</script>' } : { status: 200, body: 'ok' };
      accountId = (await test.gateway.accounts.createAccount({ name: 'Acme', plan: 'pro' })).id;
      rivalAccountId = (await test.gateway.accounts.createAccount({ name: 'Rival', plan: 'pro' })).id;
      sandboxPhone = (await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() })).phone;
      owner = await signedIn(test, accountId, 'owner@acme.test', 'owner');
      member = await signedIn(test, accountId, 'member@acme.test', 'member');
    });
    after(async () => {
      await receiver.close();
      await test.close();
    });

    describe('API keys', () => {
      it('an owner creates a key, sees it once, and it authenticates a real send', async () => {
        const empty = await owner.get('/keys');
        assert.equal(empty.statusCode, 200);
        assert.match(empty.body, /No API keys yet<\/span> — <a href="#key-name">create one<\/a>/);
        assert.match(empty.body, /<label for="key-name">Key name<\/label>/);
        assert.match(empty.body, /<input id="key-name" name="name"/);

        const created = await owner.post('/keys', { name: 'Production <server>', scopes: ['read', 'send'] });
        assert.equal(created.statusCode, 201);
        assert.equal(created.headers['cache-control'], 'no-store');
        assert.match(created.body, /Your new API key — copy it now, it is not shown again/);
        const plaintext = inputValue(created.body, 'new-api-key');
        assert.ok(plaintext !== undefined && API_KEY_PATTERN.test(plaintext), `a full key is shown: ${plaintext}`);
        assert.ok(created.body.includes('<td>Production &lt;server></td>'), 'the name is escaped');
        assert.ok(created.body.includes(apiKeyHint(plaintext)), 'the list shows the hint');
        assert.match(created.body, /<td>owner@acme\.test<\/td>/, 'the list names the creator');

        const [stored] = await test.gateway.apiKeys.listKeys(accountId);
        assert.equal(stored?.name, 'Production <server>');
        assert.equal(
          stored?.createdByUserId,
          (await test.gateway.accounts.listUsers(accountScope(accountId))).find((user) => user.role === 'owner')?.id,
        );

        const sent = await send(plaintext);
        assert.equal(sent.statusCode, 200, sent.body);

        const later = await owner.get('/keys');
        assert.ok(!later.body.includes(plaintext), 'the key is never shown again');
        assert.ok(!later.body.includes('new-api-key'));
        assert.ok(later.body.includes(apiKeyHint(plaintext)));
      });

      it('a blank name becomes "default"; a name over 100 characters is refused with 400 and kept in the form', async () => {
        const before = await countKeys();
        await owner.get('/keys');
        const blank = await owner.post('/keys', { name: '   ', scopes: ['read', 'send'] });
        assert.equal(blank.statusCode, 201);
        assert.ok((await test.gateway.apiKeys.listKeys(accountId)).some((key) => key.name === 'default'));

        const long = 'k'.repeat(101);
        const refused = await owner.post('/keys', { name: long, scopes: ['read', 'send'] });
        assert.equal(refused.statusCode, 400);
        assert.match(refused.body, /class="form-error" role="alert">A key name can be at most 100 characters/);
        assert.equal(inputValue(refused.body, 'key-name'), long);
        assert.equal(inputValue(refused.body, 'new-api-key'), undefined);
        assert.equal(await countKeys(), before + 1);
      });

      it('revoking a key refuses the very next request with it', async () => {
        const { apiKey, plaintext } = await test.gateway.apiKeys.createKey({ accountId, name: 'to revoke' });
        assert.equal((await send(plaintext)).statusCode, 200);
        const page = await owner.get('/keys');
        assert.ok(page.body.includes(`action="/keys/${apiKey.id}/revoke"`));
        assert.match(page.body, /data-confirm="Revoke this key\? Requests using it will be refused at once\."/);

        const revoked = await owner.post(`/keys/${apiKey.id}/revoke`, {});
        assert.equal(revoked.statusCode, 303);
        assert.equal(revoked.headers.location, '/keys');
        assert.equal((await send(plaintext)).statusCode, 401);
        const after = await owner.get('/keys');
        assert.match(after.body, /The key is revoked/);
        assert.ok(!after.body.includes(`action="/keys/${apiKey.id}/revoke"`), 'a revoked key has no Revoke button');
        assert.match(after.body, /status-revoked/);
      });

      it('a member sees the keys but cannot create or revoke them', async () => {
        const { apiKey, plaintext } = await test.gateway.apiKeys.createKey({ accountId, name: 'member-visible' });
        const page = await member.get('/keys');
        assert.equal(page.statusCode, 200);
        assert.ok(page.body.includes(apiKey.hint));
        assert.ok(!page.body.includes('Create key'));
        assert.ok(!page.body.includes('/revoke'));

        const before = await countKeys();
        assert.equal((await member.post('/keys', { name: 'sneaky' })).statusCode, 403);
        assert.equal((await member.post(`/keys/${apiKey.id}/revoke`, {})).statusCode, 403);
        assert.equal(await countKeys(), before);
        assert.equal((await send(plaintext)).statusCode, 200, 'the key still works');
      });

      it("another account's key id is not found, and that key keeps working", async () => {
        const rivalNumber = await test.gateway.numbers.addNumber(operatorScope(), { accountId: rivalAccountId, phone: uniquePhone() });
        const { apiKey, plaintext } = await test.gateway.apiKeys.createKey({ accountId: rivalAccountId, name: 'rival' });
        await owner.get('/keys');
        const response = await owner.post(`/keys/${apiKey.id}/revoke`, {});
        assert.equal(response.statusCode, 404);
        assert.match(response.body, /Not found/);
        const sent = await test.post('/send_message', { from_phone: rivalNumber.phone, to_phone: uniquePhone(), message: 'hi' }, plaintext);
        assert.equal(sent.statusCode, 200, sent.body);
      });

      it('a member of an account without keys is told who can create one', async () => {
        const emptyAccountId = (await test.gateway.accounts.createAccount({ name: 'Empty' })).id;
        const newcomer = await signedIn(test, emptyAccountId, 'member@empty.test', 'member');
        const page = await newcomer.get('/keys');
        assert.match(page.body, /No API keys yet\. An owner or admin can create one\./);
      });
    });

    describe('webhooks', () => {
      async function createThroughForm(path: string, eventTypes: string[]): Promise<string> {
        const response = await owner.submit('/webhooks/new', '/webhooks', { url: receiver.url(path), event_types: eventTypes });
        assert.equal(response.statusCode, 303, response.body);
        return webhookIdFrom(response.headers.location);
      }

      it('the new-webhook form offers every event type, checked, and stores the chosen ones', async () => {
        const form = await owner.get('/webhooks/new');
        assert.equal(form.statusCode, 200);
        assert.match(form.body, /<label for="webhook-url">Endpoint URL<\/label>/);
        assert.match(form.body, /<input id="webhook-url" name="url" type="url"/);
        assert.match(form.body, /<legend>Events<\/legend>/);
        for (const type of ['message', 'message.status', 'session.status']) {
          assert.match(form.body, new RegExp(`type="checkbox" name="event_types" value="${type.replace('.', '\\.')}" checked`));
          assert.ok(form.body.includes(`<code>${type}</code>`));
        }
        assert.match(form.body, />\s*Create webhook\s*</);

        const path = freshPath();
        const id = await createThroughForm(path, ['message', 'session.status']);
        const webhook = await test.gateway.webhooks.getWebhook(accountScope(accountId), id);
        assert.deepEqual(webhook.eventTypes, ['message', 'session.status']);
        assert.equal(webhook.url, receiver.url(path));

        const detail = await owner.get(`/webhooks/${id}`);
        assert.equal(detail.statusCode, 200);
        assert.match(detail.body, /The webhook is created/);
        assert.match(detail.body, /No deliveries yet — send a test event/);
        const list = await member.get('/webhooks');
        assert.ok(list.body.includes(`href="/webhooks/${id}"`));
        assert.ok(!list.body.includes('New webhook'), 'members get no New webhook link');
      });

      it('an invalid URL or no event type re-renders the form with 400, keeping the input', async () => {
        const before = (await test.gateway.webhooks.listWebhooks(accountScope(accountId))).length;
        const invalid = await owner.submit('/webhooks/new', '/webhooks', { url: 'not a url', event_types: ['message.status'] });
        assert.equal(invalid.statusCode, 400);
        assert.match(
          invalid.body,
          /role="alert">&#34;not a url&#34; is not a URL; use an absolute http:\/\/, https:\/\/, amqp:\/\/ or amqps:\/\/ URL\./,
        );
        assert.equal(inputValue(invalid.body, 'webhook-url'), 'not a url');
        assert.match(invalid.body, /value="message\.status" checked/);
        assert.match(invalid.body, /value="message"\s*\/>/, 'an unchosen event stays unchecked');

        const url = receiver.url(freshPath());
        const noEvents = await owner.post('/webhooks', { url });
        assert.equal(noEvents.statusCode, 400);
        assert.match(noEvents.body, /A webhook needs at least one event type/);
        assert.equal(inputValue(noEvents.body, 'webhook-url'), url);
        assert.equal((await test.gateway.webhooks.listWebhooks(accountScope(accountId))).length, before);
      });

      it('edit, disable, enable and delete work through the detail page', async () => {
        const id = await createThroughForm(freshPath(), ['message']);
        const edit = await owner.get(`/webhooks/${id}/edit`);
        assert.equal(edit.statusCode, 200);
        assert.match(edit.body, />\s*Save webhook\s*</);
        assert.match(edit.body, /value="message" checked/);
        const newUrl = receiver.url(freshPath());
        const saved = await owner.post(`/webhooks/${id}`, { url: newUrl, event_types: ['message.status'] });
        assert.equal(saved.statusCode, 303);
        assert.equal(saved.headers.location, `/webhooks/${id}`);
        let webhook = await test.gateway.webhooks.getWebhook(accountScope(accountId), id);
        assert.equal(webhook.url, newUrl);
        assert.deepEqual(webhook.eventTypes, ['message.status']);

        const badEdit = await owner.submit(`/webhooks/${id}/edit`, `/webhooks/${id}`, {
          url: 'ftp://example.com/',
          event_types: ['message'],
        });
        assert.equal(badEdit.statusCode, 400);
        assert.match(badEdit.body, /must use http or https/);
        assert.equal((await test.gateway.webhooks.getWebhook(accountScope(accountId), id)).url, newUrl);

        await owner.get(`/webhooks/${id}`);
        assert.equal((await owner.post(`/webhooks/${id}/disable`, {})).statusCode, 303);
        webhook = await test.gateway.webhooks.getWebhook(accountScope(accountId), id);
        assert.equal(webhook.enabled, false);
        const disabledPage = await owner.get(`/webhooks/${id}`);
        assert.match(disabledPage.body, /status-disabled/);
        assert.match(disabledPage.body, /Disabled by a user\./);
        assert.ok(disabledPage.body.includes(`action="/webhooks/${id}/enable"`));

        assert.equal((await owner.post(`/webhooks/${id}/enable`, {})).statusCode, 303);
        assert.equal((await test.gateway.webhooks.getWebhook(accountScope(accountId), id)).enabled, true);

        const deleted = await owner.post(`/webhooks/${id}/delete`, {});
        assert.equal(deleted.statusCode, 303);
        assert.equal(deleted.headers.location, '/webhooks');
        await assert.rejects(
          test.gateway.webhooks.getWebhook(accountScope(accountId), id),
          (error: AppError) => error.code === 'webhook_not_found',
        );
        assert.equal((await owner.get(`/webhooks/${id}`)).statusCode, 404);
      });

      it('reveal shows the stored secret; rotate shows a new one and keeps the old for 24 h', async () => {
        const id = await createThroughForm(freshPath(), ['message']);
        await owner.get(`/webhooks/${id}`);
        const revealed = await owner.post(`/webhooks/${id}/secret`, {});
        assert.equal(revealed.statusCode, 200);
        assert.equal(revealed.headers['cache-control'], 'no-store');
        const secret = inputValue(revealed.body, 'webhook-secret');
        assert.match(secret ?? '', /^whsec_[A-Za-z0-9+/]+=*$/);
        assert.equal(secret, await test.gateway.webhooks.revealSecret(accountScope(accountId), id));
        assert.equal(inputValue((await owner.get(`/webhooks/${id}`)).body, 'webhook-secret'), undefined, 'shown only on request');

        const rotated = await owner.post(`/webhooks/${id}/rotate-secret`, {});
        assert.equal(rotated.statusCode, 200);
        const newSecret = inputValue(rotated.body, 'webhook-secret');
        assert.notEqual(newSecret, secret);
        assert.equal(newSecret, await test.gateway.webhooks.revealSecret(accountScope(accountId), id));
        assert.match(rotated.body, /The old secret keeps signing too until/);
      });

      it('a test event appears in the delivery log with its attempt, escaped, and can be redelivered', async () => {
        const path = `${freshPath()}-html`;
        const id = await createThroughForm(path, ['message']);
        await owner.get(`/webhooks/${id}`);
        assert.equal((await owner.post(`/webhooks/${id}/test`, {})).statusCode, 303);
        await receiver.waitForRequests(1, (request) => request.path === path);
        const [entry] = await eventually(async () => {
          const entries = await test.gateway.webhooks.listDeliveries(accountScope(accountId), id);
          return entries[0]?.delivery.state === 'delivered' ? entries : undefined;
        }, 'the test delivery to succeed');
        assert.ok(entry);

        const page = await owner.get(`/webhooks/${id}`);
        assert.match(page.body, /<h2 id="delivery-log">Delivery log<\/h2>/);
        assert.ok(page.body.includes(`data-delivery-id="${entry.delivery.id}"`));
        assert.match(page.body, /<code>test<\/code>/);
        assert.equal(entry.attempts.length, 1);
        assert.match(page.body, /status-delivered/);
        assert.match(page.body, /<td class="mono">200<\/td>/);
        assert.ok(page.body.includes('&lt;script>alert(1)&lt;/script>'), 'the response excerpt is escaped');
        assert.ok(!page.body.includes('<script>alert(1)'));
        assert.ok(page.body.includes(`${entry.attempts[0]!.durationMs} ms`));
        const redeliverAction = `/webhooks/${id}/deliveries/${entry.delivery.id}/redeliver`;
        assert.ok(page.body.includes(`action="${redeliverAction}"`));

        const redelivered = await owner.post(redeliverAction, {});
        assert.equal(redelivered.statusCode, 303);
        assert.equal(redelivered.headers.location, `/webhooks/${id}`);
        // The delivery had succeeded, so a second request and attempt can only be the redelivery.
        const [first, second] = await receiver.waitForRequests(2, (request) => request.path === path);
        assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id'], 'a redelivery keeps its webhook-id');
        const redone = await eventually(async () => {
          const again = await test.gateway.webhooks.getDelivery(accountScope(accountId), entry.delivery.id);
          return again.attempts.length === 2 && again.delivery.state === 'delivered' ? again : undefined;
        }, 'the redelivery attempt to be logged');
        assert.equal(redone.delivery.attemptCount, 2);
        assert.equal(
          (await owner.get(`/webhooks/${id}`)).body.match(/<td class="mono">200<\/td>/g)?.length,
          2,
          'both attempts are in the log',
        );
      });

      it('a member sees the log but cannot reveal, rotate, delete, test or redeliver', async () => {
        const path = freshPath();
        const id = await createThroughForm(path, ['message']);
        await test.gateway.webhooks.sendTestEvent(accountScope(accountId), id);
        const [entry] = await eventually(async () => {
          const entries = await test.gateway.webhooks.listDeliveries(accountScope(accountId), id);
          return entries[0]?.delivery.state === 'delivered' ? entries : undefined;
        }, 'the test delivery to succeed');
        const secret = await test.gateway.webhooks.revealSecret(accountScope(accountId), id);

        const page = await member.get(`/webhooks/${id}`);
        assert.equal(page.statusCode, 200);
        assert.match(page.body, /status-delivered/);
        for (const hidden of ['Reveal secret', 'Rotate secret', 'Send test event', 'Redeliver', '/delete', '/edit']) {
          assert.ok(!page.body.includes(hidden), `a member sees no ${hidden}`);
        }
        for (const action of ['secret', 'rotate-secret', 'delete', 'test', 'disable', `deliveries/${entry!.delivery.id}/redeliver`]) {
          const response = await member.post(`/webhooks/${id}/${action}`, {});
          assert.equal(response.statusCode, 403, action);
          assert.ok(!response.body.includes(secret));
        }
        assert.equal((await member.post('/webhooks', { url: receiver.url(freshPath()), event_types: 'message' })).statusCode, 403);
        assert.equal((await member.get('/webhooks/new')).statusCode, 403);
        assert.equal(await test.gateway.webhooks.revealSecret(accountScope(accountId), id), secret, 'the secret is unchanged');
        assert.equal((await test.gateway.webhooks.getWebhook(accountScope(accountId), id)).enabled, true);
        assert.equal(
          (await test.gateway.webhooks.listDeliveries(accountScope(accountId), id))[0]?.attempts.length,
          entry!.attempts.length,
          'nothing was redelivered',
        );
      });

      it("another account's webhook and delivery ids are not found", async () => {
        const rival = await test.gateway.webhooks.createWebhook(accountScope(rivalAccountId), {
          url: receiver.url(freshPath()),
          eventTypes: ['message'],
        });
        await test.gateway.webhooks.sendTestEvent(accountScope(rivalAccountId), rival.webhook.id);
        const [rivalEntry] = await test.gateway.webhooks.listDeliveries(accountScope(rivalAccountId), rival.webhook.id);
        assert.ok(rivalEntry);
        const ownId = await createThroughForm(freshPath(), ['message']);
        const otherOwnId = await createThroughForm(freshPath(), ['message']);
        await test.gateway.webhooks.sendTestEvent(accountScope(accountId), ownId);
        const [ownEntry] = await test.gateway.webhooks.listDeliveries(accountScope(accountId), ownId);
        assert.ok(ownEntry);

        const rivalPath = `/webhooks/${rival.webhook.id}`;
        assert.equal((await owner.get(rivalPath)).statusCode, 404);
        assert.equal((await owner.get(`${rivalPath}/edit`)).statusCode, 404);
        await owner.get('/webhooks');
        for (const action of [
          '',
          '/secret',
          '/rotate-secret',
          '/delete',
          '/disable',
          '/test',
          `/deliveries/${rivalEntry.delivery.id}/redeliver`,
        ]) {
          const response = await owner.post(`${rivalPath}${action}`, { url: receiver.url('/stolen'), event_types: 'message' });
          assert.equal(response.statusCode, 404, action);
          assert.ok(!response.body.includes(rival.secret));
        }
        // A rival delivery through one's own webhook, and one's own delivery through another own webhook.
        assert.equal((await owner.post(`/webhooks/${ownId}/deliveries/${rivalEntry.delivery.id}/redeliver`, {})).statusCode, 404);
        assert.equal((await owner.post(`/webhooks/${otherOwnId}/deliveries/${ownEntry.delivery.id}/redeliver`, {})).statusCode, 404);

        const untouched = await test.gateway.webhooks.getWebhook(accountScope(rivalAccountId), rival.webhook.id);
        assert.equal(untouched.url, rival.webhook.url);
        assert.equal(untouched.enabled, true);
        assert.equal(await test.gateway.webhooks.revealSecret(accountScope(rivalAccountId), rival.webhook.id), rival.secret);
      });
    });
  });

  describe(`dashboard webhooks without WAGW_WEBHOOK_ALLOW_PRIVATE (${dialect})`, () => {
    let test: TestGateway;
    let owner: DashboardClient;
    let accountId: string;

    before(async () => {
      test = await startTestGateway(dialect);
      accountId = (await test.gateway.accounts.createAccount({ name: 'Guarded' })).id;
      owner = await signedIn(test, accountId, 'owner@guarded.test', 'owner');
    });
    after(() => test.close());

    it('a URL that reaches only a private or reserved address is refused with 400', async () => {
      const response = await owner.submit('/webhooks/new', '/webhooks', {
        url: 'http://169.254.169.254/latest/meta-data',
        event_types: ['message'],
      });
      assert.equal(response.statusCode, 400);
      assert.match(response.body, /169\.254\.169\.254 resolves only to private, loopback or reserved addresses/);
      assert.equal(inputValue(response.body, 'webhook-url'), 'http://169.254.169.254/latest/meta-data');
      assert.deepEqual(await test.gateway.webhooks.listWebhooks(accountScope(accountId)), []);
    });

    it('a RabbitMQ sink is made and edited through the form, its exchange and routing key stored and shown again', async () => {
      const created = await owner.submit('/webhooks/new', '/webhooks', {
        url: 'amqp://8.8.8.8',
        event_types: ['message'],
        rabbitmq_exchange: 'wagw.events',
        rabbitmq_routing_key: '{event}.{number}',
      });
      assert.equal(created.statusCode, 303, created.body);
      const id = webhookIdFrom(created.headers.location);
      const stored = await test.gateway.webhooks.getWebhook(accountScope(accountId), id);
      assert.deepEqual(stored.rabbitmq, { exchange: 'wagw.events', routingKey: '{event}.{number}' });

      const edit = await owner.get(`/webhooks/${id}/edit`);
      assert.equal(inputValue(edit.body, 'rabbitmq-exchange'), 'wagw.events');
      assert.equal(inputValue(edit.body, 'rabbitmq-routing-key'), '{event}.{number}');
      const saved = await owner.post(`/webhooks/${id}`, {
        url: 'amqp://8.8.8.8',
        event_types: ['message'],
        rabbitmq_exchange: '',
        rabbitmq_routing_key: 'all.{event}',
      });
      assert.equal(saved.statusCode, 303, saved.body);
      assert.deepEqual((await test.gateway.webhooks.getWebhook(accountScope(accountId), id)).rabbitmq, {
        exchange: '',
        routingKey: 'all.{event}',
      });
      await test.gateway.webhooks.deleteWebhook(accountScope(accountId), id);
    });

    it('a sink without a routing key, or an http URL with sink fields, is refused with 400 and the fields kept', async () => {
      const noKey = await owner.submit('/webhooks/new', '/webhooks', {
        url: 'amqp://8.8.8.8',
        event_types: ['message'],
        rabbitmq_exchange: 'wagw.events',
        rabbitmq_routing_key: '',
      });
      assert.equal(noKey.statusCode, 400);
      assert.match(noKey.body, /role="alert">[^<]*routing/);
      assert.equal(inputValue(noKey.body, 'rabbitmq-exchange'), 'wagw.events');

      const httpWithSink = await owner.submit('/webhooks/new', '/webhooks', {
        url: 'https://8.8.8.8/hook',
        event_types: ['message'],
        rabbitmq_exchange: 'wagw.events',
        rabbitmq_routing_key: '{event}',
      });
      assert.equal(httpWithSink.statusCode, 400);
      assert.match(httpWithSink.body, /rabbitmq is for a RabbitMQ sink/);
      assert.equal(inputValue(httpWithSink.body, 'rabbitmq-routing-key'), '{event}');
      assert.deepEqual(await test.gateway.webhooks.listWebhooks(accountScope(accountId)), []);
    });

    it('a Chatwoot inbox is made and edited through the form: token write-only, callback URL shown, audited', async () => {
      const token = 'cw-token-<never-shown>';
      const created = await owner.submit('/webhooks/new', '/webhooks', {
        url: 'https://8.8.8.8',
        event_types: ['call'],
        chatwoot_account_id: '1',
        chatwoot_inbox_id: '4',
        chatwoot_number: '',
        chatwoot_api_access_token: token,
      });
      assert.equal(created.statusCode, 303, created.body);
      const id = webhookIdFrom(created.headers.location);
      const scope = accountScope(accountId);
      const stored = await test.gateway.webhooks.getWebhook(scope, id);
      assert.deepEqual([stored.chatwoot, stored.eventTypes], [{ accountId: 1, inboxId: 4, number: null }, ['message', 'message.status']]);
      const sealed = async () =>
        (await test.gateway.store.db.selectFrom('webhooks').select('target_ciphertext').where('id', '=', id).executeTakeFirstOrThrow())
          .target_ciphertext;
      const sealedBefore = await sealed();

      const [callbackPath] = (await test.gateway.webhooks.chatwootCallbackPaths([stored])).values();
      const page = await owner.get(`/webhooks/${id}`);
      assert.match(page.body, /Chatwoot base URL/);
      assert.match(page.body, /Account 1, inbox 4; all your account&#39;s numbers|Account 1, inbox 4; all your account's numbers/);
      const shownUrl = inputValue(page.body, 'chatwoot-callback-url');
      assert.ok(shownUrl?.endsWith(callbackPath!), `the callback URL is shown: ${shownUrl}`);
      assert.ok(!page.body.includes('cw-token'), 'the token is never shown');

      const edit = await owner.get(`/webhooks/${id}/edit`);
      assert.deepEqual(
        ['chatwoot-account-id', 'chatwoot-inbox-id', 'chatwoot-token'].map((field) => inputValue(edit.body, field)),
        ['1', '4', ''],
      );
      assert.ok(!edit.body.includes('cw-token') && edit.body.includes('Leave blank to keep it'));
      const saved = await owner.post(`/webhooks/${id}`, {
        url: 'https://8.8.8.8',
        event_types: ['message'],
        chatwoot_account_id: '1',
        chatwoot_inbox_id: '5',
        chatwoot_number: '',
        chatwoot_api_access_token: '',
        chatwoot_token_stored: 'yes',
      });
      assert.equal(saved.statusCode, 303, saved.body);
      assert.deepEqual((await test.gateway.webhooks.getWebhook(scope, id)).chatwoot, { accountId: 1, inboxId: 5, number: null });
      assert.equal(await sealed(), sealedBefore, 'a blank token keeps the stored one');

      const refused = await owner.post(`/webhooks/${id}`, {
        url: 'https://8.8.8.8',
        event_types: ['message'],
        chatwoot_account_id: 'one',
        chatwoot_inbox_id: '5',
        chatwoot_api_access_token: '<script>x</script>',
      });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /chatwoot\.account_id must be a positive whole number/);
      assert.equal(inputValue(refused.body, 'chatwoot-account-id'), 'one', 'the typed id is kept');
      assert.ok(!refused.body.includes('<script>x'), 'a typed token is not echoed');

      const audited = await test.gateway.store.db
        .selectFrom('audit_events')
        .select(['action', 'actor_kind'])
        .where('target_id', '=', id)
        .orderBy('at')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        audited.map((row) => [row.action, row.actor_kind]),
        [
          ['webhook.created', 'user'],
          ['webhook.updated', 'user'],
        ],
      );
      await test.gateway.webhooks.deleteWebhook(scope, id);
    });

    it('an event stream is made with the box and no URL, and edited without one; a URL beside the box is refused', async () => {
      const withUrl = await owner.submit('/webhooks/new', '/webhooks', {
        url: 'https://8.8.8.8/hook',
        stream: 'on',
        event_types: ['message'],
      });
      assert.equal(withUrl.statusCode, 400);
      assert.match(withUrl.body, /event stream takes no url/);
      const created = await owner.submit('/webhooks/new', '/webhooks', { url: '', stream: 'on', event_types: ['message'] });
      assert.equal(created.statusCode, 303, created.body);
      const id = webhookIdFrom(created.headers.location);
      assert.equal((await test.gateway.webhooks.getWebhook(accountScope(accountId), id)).url, `/webhooks/${id}/stream`);

      const edit = await owner.get(`/webhooks/${id}/edit`);
      assert.match(edit.body, new RegExp(`connects to <code>/webhooks/${id}/stream</code>`));
      assert.equal(inputValue(edit.body, 'webhook-url'), undefined, 'a stream has no URL field');
      const saved = await owner.post(`/webhooks/${id}`, { stream: 'on', event_types: ['message', 'message.status'] });
      assert.equal(saved.statusCode, 303, saved.body);
      const stored = await test.gateway.webhooks.getWebhook(accountScope(accountId), id);
      assert.deepEqual([stored.url, stored.eventTypes], [`/webhooks/${id}/stream`, ['message', 'message.status']]);
      await test.gateway.webhooks.deleteWebhook(accountScope(accountId), id);
    });
  });
}
