import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../../src/domain/errors.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { expectJsonObject, expectRefusal, runCli } from '../../support/run-cli.ts';
import { waitFor } from '../raw-http.ts';

const ISO_UTC_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const WEBHOOK_ID = /^wh_[0-9a-z]{26}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]+=*$/;
/** A public address: accepted without WAGW_WEBHOOK_ALLOW_PRIVATE, and never dialled here. */
const PUBLIC_URL = 'https://8.8.8.8/hook';
const DAY_MS = 24 * 60 * 60 * 1000;
const UNKNOWN_ACCOUNT = 'acc_00000000000000000000000000';
const UNKNOWN_WEBHOOK = 'wh_00000000000000000000000000';
const UNKNOWN_DELIVERY = 'dlv_00000000000000000000000000';
const CONCURRENT_TESTS = 4;

const WEBHOOK_KEYS = ['account_id', 'created_at', 'disabled_reason', 'enabled', 'events', 'failing_since', 'id', 'message_scope', 'url'];
const DELIVERY_KEYS = [
  'attempt_count',
  'attempts',
  'created_at',
  'event_type',
  'id',
  'last_error',
  'last_status_code',
  'next_attempt_at',
  'state',
  'webhook_id',
];

// Each test makes its own account and webhooks, so tests and dialects may run side by side: a CLI
// start costs about a second of CPU, and overlapping them is what keeps this file short.
describe('wagw webhook', { concurrency: dialects.length }, () => {
  for (const dialect of dialects) {
    describe(`wagw webhook (${dialect})`, { concurrency: CONCURRENT_TESTS }, () => {
      let test: TestGateway;
      const wagw = (...args: string[]) => runCli(test.database.url, [...args, '--json']);
      const newAccount = async () => (await seedAccount(test.gateway, { numbers: 0 })).accountId;
      const newWebhook = async (accountId?: string) =>
        (await test.gateway.webhooks.createWebhook(accountScope(accountId ?? (await newAccount())), { url: PUBLIC_URL })).webhook;

      before(async () => {
        test = await startTestGateway(dialect);
      });
      after(() => test.close());

      describe('every command prints exactly one JSON object with --json and exits 0', { concurrency: CONCURRENT_TESTS }, () => {
        it('create prints the stored webhook and its signing secret, which is the one that signs', async () => {
          const accountId = await newAccount();
          const created = expectJsonObject(
            await wagw(
              'webhook',
              'create',
              '--account',
              accountId,
              '--url',
              PUBLIC_URL,
              '--events',
              'message,session.status',
              '--scope',
              'all',
            ),
          );
          assert.deepEqual(Object.keys(created).sort(), [...WEBHOOK_KEYS, 'secret'].sort());
          assert.match(created.id, WEBHOOK_ID);
          assert.match(created.secret, SECRET);
          assert.match(created.created_at, ISO_UTC_MILLISECONDS);
          assert.deepEqual(
            {
              account_id: created.account_id,
              url: created.url,
              events: created.events,
              message_scope: created.message_scope,
              enabled: created.enabled,
              disabled_reason: created.disabled_reason,
              failing_since: created.failing_since,
            },
            {
              account_id: accountId,
              url: PUBLIC_URL,
              events: ['message', 'session.status'],
              message_scope: 'all',
              enabled: true,
              disabled_reason: null,
              failing_since: null,
            },
          );
          const stored = await test.gateway.webhooks.getWebhook(accountScope(accountId), created.id);
          assert.deepEqual([stored.eventTypes, stored.messageScope], [['message', 'session.status'], 'all']);
          assert.equal(await test.gateway.webhooks.revealSecret(operatorScope(), created.id), created.secret);
        });

        it('list prints {"webhooks": [...]} with exactly the account\'s webhooks', async () => {
          const accountId = await newAccount();
          const mine = [await newWebhook(accountId), await newWebhook(accountId)];
          await newWebhook(); // Another account's, which must not be listed.
          const listed = expectJsonObject(await wagw('webhook', 'list', '--account', accountId));
          assert.deepEqual(Object.keys(listed), ['webhooks']);
          assert.deepEqual(listed.webhooks.map((webhook: { id: string }) => webhook.id).sort(), mine.map((webhook) => webhook.id).sort());
          for (const webhook of listed.webhooks) {
            assert.deepEqual(Object.keys(webhook).sort(), WEBHOOK_KEYS, 'a listing never shows the secret');
          }
        });

        it('update --disable --events disables the webhook with a reason and replaces its events', async () => {
          const webhook = await newWebhook();
          const updated = expectJsonObject(
            await wagw('webhook', 'update', webhook.id, '--disable', '--events', 'message.status,session.status', '--scope', 'group'),
          );
          assert.deepEqual(Object.keys(updated).sort(), WEBHOOK_KEYS);
          assert.deepEqual(
            { id: updated.id, enabled: updated.enabled, events: updated.events, message_scope: updated.message_scope },
            { id: webhook.id, enabled: false, events: ['message.status', 'session.status'], message_scope: 'group' },
          );
          assert.match(updated.disabled_reason, /\S/);
          const stored = await test.gateway.webhooks.getWebhook(operatorScope(), webhook.id);
          assert.deepEqual(
            { enabled: stored.enabled, eventTypes: stored.eventTypes },
            { enabled: false, eventTypes: ['message.status', 'session.status'] },
          );
        });

        it('update --enable turns a disabled webhook back on and clears the reason', async () => {
          const webhook = await newWebhook();
          await test.gateway.webhooks.updateWebhook(operatorScope(), webhook.id, { enabled: false });
          const updated = expectJsonObject(await wagw('webhook', 'update', webhook.id, '--enable'));
          assert.deepEqual(
            { enabled: updated.enabled, disabled_reason: updated.disabled_reason, events: updated.events },
            { enabled: true, disabled_reason: null, events: ['message'] },
          );
          assert.equal((await test.gateway.webhooks.getWebhook(operatorScope(), webhook.id)).enabled, true);
        });

        it('rotate-secret prints a new secret, which signs from now on, and keeps the old one valid for 24 hours', async () => {
          const webhook = await newWebhook();
          const oldSecret = await test.gateway.webhooks.revealSecret(operatorScope(), webhook.id);
          const startedAt = Date.now();
          const rotated = expectJsonObject(await wagw('webhook', 'rotate-secret', webhook.id));
          const finishedAt = Date.now();
          assert.deepEqual(Object.keys(rotated).sort(), ['id', 'previous_secret_valid_until', 'secret']);
          assert.equal(rotated.id, webhook.id);
          assert.match(rotated.secret, SECRET);
          assert.notEqual(rotated.secret, oldSecret);
          assert.equal(await test.gateway.webhooks.revealSecret(operatorScope(), webhook.id), rotated.secret);
          assert.match(rotated.previous_secret_valid_until, ISO_UTC_MILLISECONDS);
          const validUntil = Date.parse(rotated.previous_secret_valid_until);
          assert.ok(validUntil >= startedAt + DAY_MS && validUntil <= finishedAt + DAY_MS, rotated.previous_secret_valid_until);
        });

        it('test queues a test event for the webhook and says so', async () => {
          const webhook = await newWebhook();
          const queued = expectJsonObject(await wagw('webhook', 'test', webhook.id));
          assert.deepEqual(queued, { webhook_id: webhook.id, queued: true });
          const deliveries = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
          assert.deepEqual(
            deliveries.map(({ delivery }) => [delivery.eventType, delivery.state]),
            [['test', 'pending']],
          );
        });

        it('deliveries prints {"deliveries": [...]} newest first, each with its attempts', async () => {
          const webhook = await newWebhook();
          await test.gateway.webhooks.sendTestEvent(operatorScope(), webhook.id);
          await test.gateway.webhooks.sendTestEvent(operatorScope(), webhook.id);
          const expected = (await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id)).map(({ delivery }) => delivery.id);
          const listed = expectJsonObject(await wagw('webhook', 'deliveries', webhook.id));
          assert.deepEqual(Object.keys(listed), ['deliveries']);
          assert.deepEqual(
            listed.deliveries.map((delivery: { id: string }) => delivery.id),
            expected,
          );
          assert.ok(expected[0]! > expected[1]!, 'newest first');
          for (const delivery of listed.deliveries) {
            assert.deepEqual(Object.keys(delivery).sort(), DELIVERY_KEYS);
            assert.deepEqual(
              {
                webhook_id: delivery.webhook_id,
                event_type: delivery.event_type,
                state: delivery.state,
                attempt_count: delivery.attempt_count,
                attempts: delivery.attempts,
              },
              { webhook_id: webhook.id, event_type: 'test', state: 'pending', attempt_count: 0, attempts: [] },
            );
            assert.match(delivery.next_attempt_at, ISO_UTC_MILLISECONDS);
          }
        });

        it('redeliver puts a failed delivery back in line for now, keeping its attempt history', async () => {
          // A delivery that really failed: a real worker, a receiver answering 500, and a
          // schedule of one immediate retry. Its own database keeps that worker away from the
          // other tests' deliveries.
          const isolated = await startTestGateway(dialect, {
            WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
            WAGW_WEBHOOK_RETRY_SCHEDULE: '0',
            WAGW_WEBHOOK_POLL_INTERVAL_MS: '50',
          });
          const receiver = await WebhookReceiver.start();
          receiver.responder = () => ({ status: 500, body: 'boom' });
          try {
            const { accountId } = await seedAccount(isolated.gateway, { numbers: 0 });
            const { webhook } = await isolated.gateway.webhooks.createWebhook(accountScope(accountId), { url: receiver.url() });
            await isolated.gateway.webhooks.sendTestEvent(operatorScope(), webhook.id);
            isolated.gateway.deliveryWorker.start();
            const failed = await waitFor(
              async () => {
                const [entry] = await isolated.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
                return entry?.delivery.state === 'failed' && entry;
              },
              10_000,
              'the delivery to fail',
            );
            await isolated.gateway.deliveryWorker.stop();
            assert.equal(receiver.requests.length, 2);

            const startedAt = Date.now();
            const redelivered = expectJsonObject(
              await runCli(isolated.database.url, ['webhook', 'redeliver', failed.delivery.id, '--json']),
            );
            assert.deepEqual(Object.keys(redelivered).sort(), DELIVERY_KEYS);
            assert.deepEqual(
              {
                id: redelivered.id,
                state: redelivered.state,
                attempt_count: redelivered.attempt_count,
                last_status_code: redelivered.last_status_code,
              },
              { id: failed.delivery.id, state: 'pending', attempt_count: 2, last_status_code: 500 },
            );
            assert.deepEqual(
              redelivered.attempts.map((attempt: { id: string; status_code: number; response_excerpt: string }) => [
                attempt.id,
                attempt.status_code,
                attempt.response_excerpt,
              ]),
              failed.attempts.map((attempt) => [attempt.id, 500, 'boom']),
            );
            const nextAttemptAt = Date.parse(redelivered.next_attempt_at);
            assert.ok(nextAttemptAt >= startedAt - 1_000 && nextAttemptAt <= Date.now(), `due now, not ${redelivered.next_attempt_at}`);
            assert.equal((await isolated.gateway.webhooks.getDelivery(operatorScope(), failed.delivery.id)).delivery.state, 'pending');
          } finally {
            await receiver.close();
            await isolated.close();
          }
        });

        it('delete prints the deleted webhook and removes it with its delivery history', async () => {
          const webhook = await newWebhook();
          await test.gateway.webhooks.sendTestEvent(operatorScope(), webhook.id);
          const [queued] = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
          assert.ok(queued !== undefined);
          const deleted = expectJsonObject(await wagw('webhook', 'delete', webhook.id));
          assert.deepEqual(Object.keys(deleted).sort(), [...WEBHOOK_KEYS, 'deleted'].sort());
          assert.deepEqual({ id: deleted.id, deleted: deleted.deleted }, { id: webhook.id, deleted: true });
          await assert.rejects(
            test.gateway.webhooks.getWebhook(operatorScope(), webhook.id),
            (error: unknown) => error instanceof AppError && error.code === 'webhook_not_found',
          );
          await assert.rejects(
            test.gateway.webhooks.getDelivery(operatorScope(), queued.delivery.id),
            (error: unknown) => error instanceof AppError && error.code === 'delivery_not_found',
          );
        });
      });

      describe('mistakes exit 1 with one clear message on stderr and change nothing', { concurrency: CONCURRENT_TESTS }, () => {
        it('an unknown account is named', async () => {
          expectRefusal(await wagw('webhook', 'create', '--account', UNKNOWN_ACCOUNT, '--url', PUBLIC_URL), UNKNOWN_ACCOUNT);
        });

        it('an unknown webhook id is named', async () => {
          expectRefusal(await wagw('webhook', 'update', UNKNOWN_WEBHOOK, '--enable'), UNKNOWN_WEBHOOK);
        });

        it('an unknown delivery id is named', async () => {
          expectRefusal(await wagw('webhook', 'redeliver', UNKNOWN_DELIVERY), UNKNOWN_DELIVERY);
        });

        it('a --limit that is not a whole number is refused, naming the option, instead of silently showing 50', async () => {
          const webhook = await newWebhook();
          expectRefusal(await wagw('webhook', 'deliveries', webhook.id, '--limit', 'abc'), '--limit');
        });

        it('a bad URL, a blocked URL and an unknown event type are refused, and no webhook is created', async () => {
          const accountId = await newAccount();
          const [badUrl, blocked, badEvent] = await Promise.all([
            wagw('webhook', 'create', '--account', accountId, '--url', 'not a url'),
            wagw('webhook', 'create', '--account', accountId, '--url', 'http://127.0.0.1:8080/x'),
            wagw('webhook', 'create', '--account', accountId, '--url', PUBLIC_URL, '--events', 'message,bogus'),
          ]);
          expectRefusal(badUrl, 'not a url');
          // The operator is told why, and how to allow it for local development.
          expectRefusal(blocked, '127.0.0.1', 'WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS');
          expectRefusal(badEvent, 'bogus', 'message.status');
          assert.deepEqual(await test.gateway.webhooks.listWebhooks(accountScope(accountId)), []);
        });
      });
    });
  }
});
