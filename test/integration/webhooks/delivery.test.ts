import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import {
  ISO_UTC_MILLISECONDS,
  onlyDelivery,
  payloadOf,
  receiveIncoming,
  sleep,
  startDeliveringGateway,
  verifiedPayload,
  subscribeFresh,
  webhookEnv,
  onPath,
} from '../../support/delivery-support.ts';

const packageVersion = (JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
/** Longer than the whole 0.2 s retry schedule with jitter: a duplicate or retry would have come. */
const QUIET_PERIOD_MS = 900;

function randomSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

for (const dialect of dialects) {
  // Side by side: each test seeds its own accounts and reads only its own webhooks' paths and deliveries.
  describe(`webhook delivery (${dialect})`, { concurrency: true }, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv());
      receiver = await WebhookReceiver.start();
    });
    after(async () => {
      await receiver.close();
      await test.close();
    });

    const subscribe = (accountId: string, eventTypes: string[]) => subscribeFresh(test, receiver, accountId, eventTypes);

    it('an incoming message arrives signed per Standard Webhooks, with every field of both payload shapes', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(account.accountId, ['message']);
      const from = uniquePhone();
      const received = await receiveIncoming(test, account, 'Hello webhook ✅ "quoted"\n', from);

      const [request] = await receiver.waitForRequests(1, onPath(path));
      assert.ok(request);
      assert.equal(request.method, 'POST');
      assert.match(request.headers['content-type'] ?? '', /^application\/json\b/);
      assert.equal(request.headers['user-agent'], `wa-gateway/${packageVersion}`);
      const webhookId = request.headers['webhook-id'];
      assert.equal(typeof webhookId, 'string');
      assert.ok((webhookId as string).length > 0);
      const timestamp = request.headers['webhook-timestamp'] as string;
      assert.match(timestamp, /^\d+$/, 'webhook-timestamp is whole unix seconds');
      assert.ok(Math.abs(Number(timestamp) - request.receivedAt / 1000) <= 5, `webhook-timestamp ${timestamp} is close to now`);
      assert.match(request.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]+={0,2}$/);

      const payload = verifiedPayload(request, secret);
      assert.deepEqual(payload, {
        event: 'message',
        webhook_id: webhook.id,
        message_id: received.message_id,
        created_at: received.created_at,
        from_phone: from,
        from_lid: null,
        to_phone: account.phones[0],
        group: null,
        message: 'Hello webhook ✅ "quoted"\n',
        content_kind: 'text',
        reply_to: null,
        status: 'received',
        data: { from, message: 'Hello webhook ✅ "quoted"\n', timestamp: received.created_at },
      });
      assert.match(payload.webhook_id as string, /^wh_/);
      assert.match(payload.message_id as string, /^msg_/);
      assert.match(payload.created_at as string, ISO_UTC_MILLISECONDS);

      // The check above must be one that can fail: another secret, or a changed byte, is refused.
      assert.throws(() => verifiedPayload(request, randomSecret()));
      assert.throws(() => verifiedPayload({ ...request, body: request.body.replace('Hello', 'Hellp') }, secret));
    });

    it("a sandbox-to-sandbox send arrives at the recipient's webhook with the sender's number as from_phone", async () => {
      const sender = await seedAccount(test.gateway);
      const recipient = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(recipient.accountId, ['message']);
      const response = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: recipient.phones[0], message: 'across 🌍' },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);

      const [request] = await receiver.waitForRequests(1, onPath(path));
      const payload = verifiedPayload(request!, secret);
      const [inbound] = await listMessages(test.gateway.store.db, { accountId: recipient.accountId, direction: 'inbound', limit: 10 });
      assert.ok(inbound, 'the recipient stored the message');
      const createdAt = inbound.createdAt.toISOString();
      assert.deepEqual(payload, {
        event: 'message',
        webhook_id: webhook.id,
        message_id: inbound.id,
        created_at: createdAt,
        from_phone: sender.phones[0],
        from_lid: null,
        to_phone: recipient.phones[0],
        group: null,
        message: 'across 🌍',
        content_kind: 'text',
        reply_to: null,
        status: 'received',
        data: { from: sender.phones[0], message: 'across 🌍', timestamp: createdAt },
      });
      assert.match(createdAt, ISO_UTC_MILLISECONDS);
    });

    it('each incoming message is delivered exactly once to every subscribed webhook, and never to unsubscribed or disabled ones', async () => {
      const sender = await seedAccount(test.gateway);
      const recipient = await seedAccount(test.gateway);
      const first = await subscribe(recipient.accountId, ['message']);
      const second = await subscribe(recipient.accountId, ['message', 'session.status']);
      const statusOnly = await subscribe(recipient.accountId, ['message.status']);
      const disabled = await subscribe(recipient.accountId, ['message']);
      await test.gateway.webhooks.updateWebhook(operatorScope(), disabled.webhook.id, { enabled: false });

      const received = await receiveIncoming(test, recipient, 'via /sandbox/receive');
      await receiver.waitForRequests(1, onPath(first.path));
      await receiver.waitForRequests(1, onPath(second.path));
      const sent = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: recipient.phones[0], message: 'via a sandbox send' },
        sender.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      await receiver.waitForRequests(2, onPath(first.path));
      await receiver.waitForRequests(2, onPath(second.path));
      await sleep(QUIET_PERIOD_MS);

      for (const { path, secret } of [first, second]) {
        const texts = receiver.requests.filter(onPath(path)).map((request) => verifiedPayload(request, secret).message);
        assert.deepEqual(texts, ['via /sandbox/receive', 'via a sandbox send'], `${path} got each message once`);
      }
      assert.equal(payloadOf(receiver.requests.find(onPath(first.path))!).message_id, received.message_id);
      assert.deepEqual(receiver.requests.filter(onPath(statusOnly.path)), [], 'a message.status-only webhook gets no message event');
      assert.deepEqual(receiver.requests.filter(onPath(disabled.path)), [], 'a disabled webhook gets nothing');
      // Nothing is even queued for them, so re-enabling the webhook later cannot flush old events.
      assert.deepEqual(await test.gateway.webhooks.listDeliveries(operatorScope(), statusOnly.webhook.id), []);
      assert.deepEqual(await test.gateway.webhooks.listDeliveries(operatorScope(), disabled.webhook.id), []);
      for (const { webhook } of [first, second]) {
        const deliveries = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
        assert.deepEqual(
          deliveries.map((entry) => entry.delivery.state),
          ['delivered', 'delivered'],
        );
        assert.deepEqual(
          deliveries.map((entry) => entry.attempts.length),
          [1, 1],
        );
      }
    });

    it('a send produces message.status events, sent and then delivered, with every field', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(account.accountId, ['message.status']);
      const response = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', message: 'status please' },
        account.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      const messageId = response.json().message_id as string;

      const requests = await receiver.waitForRequests(2, onPath(path));
      await sleep(QUIET_PERIOD_MS);
      assert.equal(receiver.requests.filter(onPath(path)).length, 2, 'one event per status, no more');
      const payloads = requests.map((request) => verifiedPayload(request, secret));
      // Deliveries run side by side, so arrival order is not promised; the timestamps carry the order.
      const byStatus = new Map(payloads.map((payload) => [payload.status, payload]));
      for (const status of ['sent', 'delivered']) {
        const payload = byStatus.get(status);
        assert.ok(payload, `a ${status} event arrived`);
        assert.deepEqual(payload, {
          event: 'message.status',
          webhook_id: webhook.id,
          message_id: messageId,
          from_phone: account.phones[0],
          to_phone: '+14155550100',
          group: null,
          status,
          error_code: null,
          timestamp: payload.timestamp,
        });
        assert.match(payload.timestamp as string, ISO_UTC_MILLISECONDS);
      }
      assert.ok(
        Date.parse(byStatus.get('sent')!.timestamp as string) <= Date.parse(byStatus.get('delivered')!.timestamp as string),
        'sent is not later than delivered',
      );
    });

    it('a session status change is delivered as session.status with the phone, status and reason', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(account.accountId, ['session.status']);
      const phone = account.phones[0]!;
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), phone, 'disconnected');
      const [down] = await receiver.waitForRequests(1, onPath(path));
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), phone, 'connected');
      const [, up] = await receiver.waitForRequests(2, onPath(path));

      for (const [request, status] of [
        [down!, 'disconnected'],
        [up!, 'connected'],
      ] as const) {
        const payload = verifiedPayload(request, secret);
        assert.deepEqual(Object.keys(payload).sort(), ['event', 'phone', 'reason', 'status', 'timestamp', 'webhook_id']);
        assert.equal(payload.event, 'session.status');
        assert.equal(payload.webhook_id, webhook.id);
        assert.equal(payload.phone, phone);
        assert.equal(payload.status, status);
        assert.ok(
          payload.reason === null || (typeof payload.reason === 'string' && payload.reason.length > 0),
          `reason ${String(payload.reason)}`,
        );
        assert.match(payload.timestamp as string, ISO_UTC_MILLISECONDS);
      }
    });

    it('after a secret rotation every delivery verifies with the new secret alone and with the old secret alone', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret: oldSecret, path } = await subscribe(account.accountId, ['message']);
      await receiveIncoming(test, account, 'before rotation');
      const [before] = await receiver.waitForRequests(1, onPath(path));
      assert.equal((before!.headers['webhook-signature'] as string).split(' ').length, 1, 'one signature before a rotation');

      const { secret: newSecret } = await test.gateway.webhooks.rotateSecret(operatorScope(), webhook.id);
      assert.notEqual(newSecret, oldSecret);
      await receiveIncoming(test, account, 'after rotation');
      const [, rotated] = await receiver.waitForRequests(2, onPath(path));
      const signatures = (rotated!.headers['webhook-signature'] as string).split(' ');
      assert.equal(signatures.length, 2, 'two space-separated signatures');
      for (const signature of signatures) assert.match(signature, /^v1,[A-Za-z0-9+/]+={0,2}$/);
      assert.notEqual(signatures[0], signatures[1]);
      assert.equal(verifiedPayload(rotated!, newSecret).message, 'after rotation');
      assert.equal(verifiedPayload(rotated!, oldSecret).message, 'after rotation');
      assert.throws(() => verifiedPayload(rotated!, randomSecret()), 'a third secret is still refused');
    });

    it('redelivering a delivered delivery sends the same body again under the same webhook-id', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(account.accountId, ['message']);
      await receiveIncoming(test, account, 'send me twice');
      const [original] = await receiver.waitForRequests(1, onPath(path));
      const { delivery } = await onlyDelivery(test, webhook.id, (entry) => entry.delivery.state === 'delivered');

      await test.gateway.webhooks.redeliver(accountScope(account.accountId), delivery.id);
      const [, again] = await receiver.waitForRequests(2, onPath(path));
      assert.equal(again!.headers['webhook-id'], original!.headers['webhook-id']);
      assert.equal(again!.body, original!.body);
      assert.equal(verifiedPayload(again!, secret).message, 'send me twice');
      const settled = await onlyDelivery(test, webhook.id, (entry) => entry.attempts.length === 2 && entry.delivery.state === 'delivered');
      assert.deepEqual(
        settled.attempts.map((attempt) => attempt.statusCode),
        [200, 200],
      );
      await sleep(QUIET_PERIOD_MS);
      assert.equal(receiver.requests.filter(onPath(path)).length, 2, 'one redelivery, not more');
    });

    it('a test event reaches the webhook, even one not subscribed to anything it would carry', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(account.accountId, ['session.status']);
      const before = Date.now();
      await test.gateway.webhooks.sendTestEvent(accountScope(account.accountId), webhook.id);
      const [request] = await receiver.waitForRequests(1, onPath(path));
      const payload = verifiedPayload(request!, secret);
      assert.equal(payload.event, 'test');
      assert.equal(payload.webhook_id, webhook.id);
      assert.equal(typeof payload.message, 'string');
      assert.match(payload.timestamp as string, ISO_UTC_MILLISECONDS);
      assert.ok(Date.parse(payload.timestamp as string) >= before - 1);
      const { delivery } = await onlyDelivery(test, webhook.id, (entry) => entry.delivery.state === 'delivered');
      assert.equal(delivery.eventType, 'test');
    });

    it("another account's webhooks and deliveries are not found, and refused calls change nothing", async () => {
      const owner = await seedAccount(test.gateway);
      const stranger = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(owner.accountId, ['message']);
      await receiveIncoming(test, owner, 'private');
      await receiver.waitForRequests(1, onPath(path));
      const { delivery } = await onlyDelivery(test, webhook.id, (entry) => entry.delivery.state === 'delivered');
      const service = test.gateway.webhooks;

      // The owner's own id works, so each refusal below is about the account, not the call.
      assert.equal((await service.getWebhook(accountScope(owner.accountId), webhook.id)).id, webhook.id);
      assert.equal((await service.listDeliveries(accountScope(owner.accountId), webhook.id)).length, 1);

      const notFound = { code: 'webhook_not_found' };
      await assert.rejects(service.getWebhook(accountScope(stranger.accountId), webhook.id), notFound);
      await assert.rejects(service.listDeliveries(accountScope(stranger.accountId), webhook.id), notFound);
      await assert.rejects(service.updateWebhook(accountScope(stranger.accountId), webhook.id, { enabled: false }), notFound);
      await assert.rejects(service.rotateSecret(accountScope(stranger.accountId), webhook.id), notFound);
      await assert.rejects(service.revealSecret(accountScope(stranger.accountId), webhook.id), notFound);
      await assert.rejects(service.sendTestEvent(accountScope(stranger.accountId), webhook.id), notFound);
      await assert.rejects(service.deleteWebhook(accountScope(stranger.accountId), webhook.id), notFound);
      await assert.rejects(service.getDelivery(accountScope(stranger.accountId), delivery.id), { code: 'delivery_not_found' });
      await assert.rejects(service.redeliver(accountScope(stranger.accountId), delivery.id), { code: 'delivery_not_found' });

      await sleep(QUIET_PERIOD_MS);
      assert.equal(receiver.requests.filter(onPath(path)).length, 1, 'no redelivery and no test event went out');
      const unchanged = await service.getWebhook(accountScope(owner.accountId), webhook.id);
      assert.equal(unchanged.enabled, true);
      assert.equal(await service.revealSecret(accountScope(owner.accountId), webhook.id), secret);
      const [entry] = await service.listDeliveries(accountScope(owner.accountId), webhook.id);
      assert.equal(entry!.attempts.length, 1);
    });

    it("a webhook receives only its own account's events", async () => {
      const quiet = await seedAccount(test.gateway);
      const watched = await seedAccount(test.gateway);
      const { path } = await subscribe(watched.accountId, ['message']);
      await receiveIncoming(test, quiet, 'not for you');
      await receiveIncoming(test, watched, 'for you');
      await receiver.waitForRequests(1, onPath(path));
      await sleep(QUIET_PERIOD_MS);
      const texts = receiver.requests.filter(onPath(path)).map((request) => payloadOf(request).message);
      assert.deepEqual(texts, ['for you']);
    });
  });
}
