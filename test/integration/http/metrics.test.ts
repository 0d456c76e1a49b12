import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { engineKinds, sessionStatuses } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { EngineSendError } from '../../../src/engines/engine.ts';
import { dialects, type Dialect } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import {
  eventually,
  onlyDelivery,
  receiveIncoming,
  startDeliveringGateway,
  subscribeFresh,
  webhookEnv,
} from '../../support/delivery-support.ts';

const TOKEN = 'metrics-token-for-the-tests-0123456789';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Reads Prometheus' text format: one sample per line, comments skipped. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, raw] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = raw!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    }
    const value = match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : Number(match[3]);
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

class Scrape {
  constructor(readonly samples: Sample[]) {}

  /** Every sample of the metric whose labels include `labels`. */
  all(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter(
      (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  }

  /** The one sample of the metric with these labels; 0 when the series does not exist yet. */
  value(name: string, labels: Record<string, string> = {}): number {
    const matching = this.all(name, labels);
    assert.ok(matching.length <= 1, `${name} ${JSON.stringify(labels)} matches ${matching.length} samples`);
    return matching[0]?.value ?? 0;
  }
}

async function scrape(test: TestGateway): Promise<Scrape> {
  const response = await test.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(response.statusCode, 200, response.body);
  return new Scrape(parseExposition(response.body));
}

/** A gateway whose delivery worker waits for the test to start it, with a receiver for its webhooks. */
function gatewayWithStoppedWorker(dialect: Dialect): { test: TestGateway; receiver: WebhookReceiver } {
  const parts = {} as { test: TestGateway; receiver: WebhookReceiver };
  before(async () => {
    parts.test = await startTestGateway(dialect, webhookEnv({ WAGW_METRICS_TOKEN: TOKEN }));
    parts.receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await parts.receiver.close();
    await parts.test.close();
  });
  return parts;
}

for (const dialect of dialects) {
  describe(`GET /metrics without a configured token (${dialect})`, () => {
    let test: TestGateway;
    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test.close());

    it('does not exist: 404 not_found, even with a bearer token', async () => {
      for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }]) {
        const response = await test.inject({ method: 'GET', url: '/metrics', headers });
        assert.equal(response.statusCode, 404);
        assert.equal(response.json().error, 'not_found');
      }
    });
  });

  describe(`GET /metrics with WAGW_METRICS_TOKEN (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;

    before(async () => {
      // A long retry delay keeps a failed delivery waiting, where the queue depth can see it.
      test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_METRICS_TOKEN: TOKEN, WAGW_WEBHOOK_RETRY_SCHEDULE: '600' }));
      receiver = await WebhookReceiver.start();
    });
    after(async () => {
      await receiver.close();
      await test.close();
    });

    it('a missing token, another scheme or a wrong token gets 401 invalid_metrics_token in the envelope', async () => {
      const refusals = [
        {},
        { authorization: `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}` },
        { authorization: 'Bearer ' },
        { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
        { authorization: `Bearer ${TOKEN}x` },
        { authorization: `Bearer ${TOKEN.slice(0, -1)}X` },
      ];
      for (const headers of refusals) {
        const response = await test.inject({ method: 'GET', url: '/metrics', headers });
        assert.equal(response.statusCode, 401, JSON.stringify(headers));
        const body = response.json() as Record<string, unknown>;
        assert.equal(body.error, 'invalid_metrics_token');
        assert.equal(typeof body.message, 'string');
        assert.doesNotMatch(response.body, /wagw_/);
      }
    });

    it('the right token gets 200 in Prometheus text format, with the gateway and process metrics', async () => {
      const response = await test.inject({ method: 'GET', url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
      assert.match(response.body, /^# TYPE wagw_http_requests_total counter$/m);
      assert.match(response.body, /^# TYPE wagw_sessions gauge$/m);
      const samples = new Scrape(parseExposition(response.body));
      assert.ok(samples.value('wagw_process_resident_memory_bytes') > 0, 'process metrics carry the wagw_ prefix');
      for (const sample of samples.samples) assert.match(sample.name, /^wagw_/);
    });

    it('every periodic task has its runs, failures, duration and last run in the scrape, and a pass counts', async () => {
      const tasks = test.gateway.scheduler
        .list()
        .map((task) => task.name)
        .sort();
      assert.deepEqual(tasks, [
        'cluster-history-prune',
        'expiry-sweep',
        'lease-renewal',
        'lease-tick',
        'lease-trust-check',
        'media-download-retries',
        'media-expiry',
        'media-orphans',
      ]);
      const before = await scrape(test);
      for (const task of tasks) {
        assert.equal(before.all('wagw_task_runs_total', { task }).length, 2, `${task} has a succeeded and a failed series`);
        assert.equal(before.value('wagw_task_runs_total', { task, outcome: 'failed' }), 0);
        assert.equal(before.all('wagw_task_last_run_timestamp_seconds', { task }).length, 1);
      }
      const startedAt = Date.now() / 1000;
      await test.gateway.runtime.sweepOnce();
      const after = await scrape(test);
      for (const task of ['expiry-sweep', 'media-expiry', 'media-download-retries', 'media-orphans', 'cluster-history-prune']) {
        const succeeded = { task, outcome: 'succeeded' };
        assert.equal(after.value('wagw_task_runs_total', succeeded) - before.value('wagw_task_runs_total', succeeded), 1, task);
        assert.equal(
          after.value('wagw_task_duration_seconds_count', { task }) - before.value('wagw_task_duration_seconds_count', { task }),
          1,
          task,
        );
        assert.ok(after.value('wagw_task_last_run_timestamp_seconds', { task }) >= Math.floor(startedAt), task);
      }
      // The test gateway's sessions were started, so its leases were renewed at least once.
      assert.ok(after.value('wagw_task_runs_total', { task: 'lease-renewal', outcome: 'succeeded' }) >= 1);
    });

    it('a send and a sandbox receive are counted under the sandbox engine', async () => {
      const account = await seedAccount(test.gateway, { numbers: 2 });
      const before = await scrape(test);
      const toOutside = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', message: 'hi' },
        account.apiKey,
      );
      assert.equal(toOutside.statusCode, 200, toOutside.body);
      await receiveIncoming(test, account, 'hello');
      // A send to another sandbox number is one sent and one received.
      const between = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: account.phones[1], message: 'hi' },
        account.apiKey,
      );
      assert.equal(between.statusCode, 200, between.body);

      const after = await scrape(test);
      const sent = { engine: 'sandbox' };
      assert.equal(after.value('wagw_messages_sent_total', sent) - before.value('wagw_messages_sent_total', sent), 2);
      assert.equal(after.value('wagw_messages_received_total', sent) - before.value('wagw_messages_received_total', sent), 2);
      assert.equal(after.value('wagw_messages_sent_total', { engine: 'baileys' }), 0);
    });

    it('a send the engine refuses counts as a failure with its reason, not as sent', async () => {
      const account = await seedAccount(test.gateway);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      const labels = { engine: 'sandbox', reason: 'not_connected' };
      const before = await scrape(test);
      await assert.rejects(
        test.gateway.supervisor.sendMessage({ ...number, status: 'disconnected' }, { toPhone: '+14155550100' as E164, text: 'hi' }),
        EngineSendError,
      );
      const after = await scrape(test);
      assert.equal(after.value('wagw_message_send_failures_total', labels) - before.value('wagw_message_send_failures_total', labels), 1);
      assert.equal(
        after.value('wagw_messages_sent_total', { engine: 'sandbox' }),
        before.value('wagw_messages_sent_total', { engine: 'sandbox' }),
      );
    });

    it('requests are counted by route pattern and status, and timed', async () => {
      const account = await seedAccount(test.gateway);
      const before = await scrape(test);
      const ok = await test.post(
        '/api/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', message: 'hi' },
        account.apiKey,
      );
      assert.equal(ok.statusCode, 200, ok.body);
      const bad = await test.post('/api/send_message', { from_phone: account.phones[0], message: 'no recipient' }, account.apiKey);
      assert.equal(bad.statusCode, 400, bad.body);
      const after = await scrape(test);

      const requests = (scrape: Scrape, status: string) =>
        scrape.value('wagw_http_requests_total', { method: 'POST', route: '/api/send_message', status_code: status });
      assert.equal(requests(after, '200') - requests(before, '200'), 1);
      assert.equal(requests(after, '400') - requests(before, '400'), 1);
      const timed = { method: 'POST', route: '/api/send_message' };
      assert.equal(
        after.value('wagw_http_request_duration_seconds_count', timed) - before.value('wagw_http_request_duration_seconds_count', timed),
        2,
      );
      assert.ok(
        after.value('wagw_http_request_duration_seconds_sum', timed) > before.value('wagw_http_request_duration_seconds_sum', timed),
        "the requests' time is added up",
      );
      assert.equal(
        after.value('wagw_http_request_duration_seconds_bucket', { ...timed, le: '+Inf' }),
        after.value('wagw_http_request_duration_seconds_count', timed),
      );
    });

    it('an unknown path is labelled unmatched, never by its own path', async () => {
      const before = await scrape(test);
      for (const path of ['/no-such-path-1', '/no-such-path-2/deeper?x=1', '/.env']) {
        assert.equal((await test.inject({ method: 'GET', url: path })).statusCode, 404);
      }
      const after = await scrape(test);
      const unmatched = { method: 'GET', route: 'unmatched', status_code: '404' };
      assert.equal(after.value('wagw_http_requests_total', unmatched) - before.value('wagw_http_requests_total', unmatched), 3);
      const routes = new Set(after.all('wagw_http_requests_total').map((sample) => sample.labels.route));
      for (const route of routes) assert.doesNotMatch(route ?? '', /no-such-path|\.env/);
    });

    it('the sessions gauge counts numbers by engine and status, and follows a status change', async () => {
      const account = await seedAccount(test.gateway);
      const before = await scrape(test);
      const total = before.all('wagw_sessions', { engine: 'sandbox' }).reduce((sum, sample) => sum + sample.value, 0);
      assert.equal(total, (await test.gateway.numbers.listNumbers(operatorScope())).length);
      assert.ok(before.value('wagw_sessions', { engine: 'sandbox', status: 'connected' }) >= 1, 'a new sandbox number is connected');

      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'disconnected');
      const after = await scrape(test);
      const change = (status: string) =>
        after.value('wagw_sessions', { engine: 'sandbox', status }) - before.value('wagw_sessions', { engine: 'sandbox', status });
      assert.equal(change('connected'), -1);
      assert.equal(change('disconnected'), 1);
      // Every pair is present, zeros included, so that an emptied status reads 0 rather than vanishing.
      assert.equal(after.all('wagw_sessions').length, engineKinds.length * sessionStatuses.length);
      assert.equal(after.all('wagw_sessions', { engine: 'baileys', status: 'connected' })[0]?.value, 0);
    });

    it('webhook attempts are counted by outcome and timed, and a delivery waiting for its retry is in the queue', async () => {
      receiver.responder = (request) => ({
        status: request.path.startsWith('/failing') ? 500 : request.path.startsWith('/gone') ? 410 : 200,
      });
      const before = await scrape(test);
      const outcomes: [string, string][] = [
        ['delivered', '/ok'],
        ['retrying', '/failing'],
        ['given_up', '/gone'],
      ];
      const waits = [];
      for (const [, prefix] of outcomes) {
        const account = await seedAccount(test.gateway);
        const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
          url: receiver.url(`${prefix}/${account.accountId}`),
          eventTypes: ['message'],
        });
        await receiveIncoming(test, account, `to ${prefix}`);
        // The counters move as the answer arrives, before the attempt row is written.
        waits.push(onlyDelivery(test, webhook.id, (entry) => entry.attempts.length === 1));
      }
      await Promise.all(waits);
      const after = await scrape(test);

      for (const [outcome] of outcomes) {
        assert.equal(
          after.value('wagw_webhook_attempts_total', { outcome }) - before.value('wagw_webhook_attempts_total', { outcome }),
          1,
          outcome,
        );
        const timed =
          after.value('wagw_webhook_attempt_duration_seconds_count', { outcome }) -
          before.value('wagw_webhook_attempt_duration_seconds_count', { outcome });
        assert.equal(timed, 1, outcome);
      }
      assert.ok(
        after.value('wagw_webhook_attempt_duration_seconds_sum', { outcome: 'delivered' }) > 0,
        "the delivered attempt's time is recorded",
      );
      assert.equal(
        after.value('wagw_webhook_delivery_lag_seconds_count') - before.value('wagw_webhook_delivery_lag_seconds_count'),
        1,
        'the delivered one, and only it, has its lag from the event recorded',
      );
      assert.ok(
        after.value('wagw_webhook_delivery_lag_seconds_sum') > before.value('wagw_webhook_delivery_lag_seconds_sum'),
        'a lag of more than nothing',
      );
      const waiting = { status: 'waiting_retry' };
      assert.equal(after.value('wagw_webhook_queue_depth', waiting) - before.value('wagw_webhook_queue_depth', waiting), 1);
    });
  });

  describe(`the webhook queue depth while no worker runs (${dialect})`, () => {
    const stopped = gatewayWithStoppedWorker(dialect);

    it('deliveries queued for an incoming message show as due until they are sent', async () => {
      const { test, receiver } = stopped;
      const empty = await scrape(test);
      assert.equal(empty.value('wagw_webhook_queue_depth', { status: 'due' }), 0);
      const account = await seedAccount(test.gateway);
      await subscribeFresh(test, receiver, account.accountId, ['message']);
      await subscribeFresh(test, receiver, account.accountId, ['message']);
      await receiveIncoming(test, account, 'one');
      await receiveIncoming(test, account, 'two');

      const queued = await scrape(test);
      assert.equal(queued.value('wagw_webhook_queue_depth', { status: 'due' }), 4);
      assert.equal(queued.value('wagw_webhook_queue_depth', { status: 'waiting_retry' }), 0);

      test.gateway.deliveryWorker.start();
      await receiver.waitForRequests(4);
      await eventually(
        async () => ((await scrape(test)).value('wagw_webhook_queue_depth', { status: 'due' }) === 0 ? true : undefined),
        'the queue to empty',
      );
    });
  });

  describe(`how far the outbox is behind (${dialect})`, () => {
    const stopped = gatewayWithStoppedWorker(dialect);

    it('the oldest due delivery no node is sending grows in age while none is sent, and is 0 once they are', async () => {
      const { test, receiver } = stopped;
      const age = async () => (await scrape(test)).value('wagw_webhook_oldest_due_age_seconds');
      assert.equal(await age(), 0);
      const account = await seedAccount(test.gateway);
      await subscribeFresh(test, receiver, account.accountId, ['message']);
      const disabled = await subscribeFresh(test, receiver, account.accountId, ['message']);
      const receivedAt = Date.now();
      await receiveIncoming(test, account, 'waiting');
      // Disabled once its delivery is queued: the delivery waits, but no worker would take it.
      await test.gateway.webhooks.updateWebhook(accountScope(account.accountId), disabled.webhook.id, { enabled: false });

      const first = await age();
      assert.ok(first >= 0 && first <= (Date.now() - receivedAt) / 1_000 + 0.001, `age ${first} s`);
      // Its age follows the clock: the worker is stopped, so nothing takes the delivery.
      await eventually(async () => ((await age()) > first ? true : undefined), 'the age to grow');

      test.gateway.deliveryWorker.start();
      await receiver.waitForRequests(1);
      await eventually(
        async () => ((await scrape(test)).value('wagw_webhook_queue_depth', { status: 'due' }) === 1 ? true : undefined),
        'the delivered one to leave the queue',
      );
      // The disabled webhook's delivery still waits (it counts in the queue's depth), but it is
      // not the outbox falling behind.
      assert.equal(await age(), 0);
    });
  });
}
