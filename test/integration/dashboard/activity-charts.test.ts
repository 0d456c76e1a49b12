/**
 * The Activity page's charts (issue 47): each day's bars show what GET /messages lists for the
 * same UTC day (since and until), by direction and status, on both databases; the webhook
 * chart counts the account's deliveries by where they stand, and the latency chart shows each
 * day's attempts, their mean and longest time as the delivery log (GET /webhooks/{id}/deliveries)
 * lists them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { waitForValue } from '../../support/waiting.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

const PASSWORD = 'activity password 1';
const DAY_MS = 86_400_000;

for (const dialect of dialects) {
  describe(`the Activity charts (${dialect})`, () => {
    let test: TestGateway;
    let seeded: SeededAccount;
    let other: SeededAccount;
    let client: DashboardClient;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' });
      seeded = await seedAccount(test.gateway, { scopes: ['read', 'send', 'webhooks'] });
      other = await seedAccount(test.gateway);
      await createTestUser(test.gateway, { accountId: seeded.accountId, email: 'owner@activity.test', password: PASSWORD, role: 'owner' });
      client = new DashboardClient(test);
      assert.equal((await client.signIn('owner@activity.test', PASSWORD)).statusCode, 303);
    });
    after(() => test.close());

    /** The figures of each day of a chart, by its `data-day`, from the page's markup. */
    function chartDays(body: string, from: string, to: string | undefined): Map<string, Record<string, number>> {
      const chart = body.slice(body.indexOf(`id="${from}"`), to === undefined ? undefined : body.indexOf(`id="${to}"`));
      const days = new Map<string, Record<string, number>>();
      for (const [, attributes] of chart.matchAll(/<g class="chart-column" ([^>]*)>/g)) {
        const figures = Object.fromEntries(
          [...attributes!.matchAll(/data-([a-z-]+)="([^"]*)"/g)].map(([, name, value]) => [name!, value!]),
        );
        const { day, ...numbers } = figures;
        days.set(day!, Object.fromEntries(Object.entries(numbers).map(([name, value]) => [name, Number(value)])));
      }
      return days;
    }

    async function api(path: string, body: object, key = seeded.apiKey): Promise<string> {
      const response = await test.post(path, body, key);
      assert.ok(response.statusCode < 300, `${path}: ${response.body}`);
      return (response.json() as { message_id: string }).message_id;
    }

    /** How many messages GET /messages lists for these filters, every page read. */
    async function listed(query: Record<string, string>): Promise<number> {
      let count = 0;
      let cursor: string | null = null;
      do {
        const params = new URLSearchParams({ ...query, limit: '100', ...(cursor !== null && { cursor }) });
        const response = await test.inject({
          method: 'GET',
          url: `/messages?${params}`,
          headers: { authorization: `Bearer ${seeded.apiKey}` },
        });
        assert.equal(response.statusCode, 200, response.body);
        const page = response.json() as { messages: unknown[]; next_cursor: string | null };
        count += page.messages.length;
        cursor = page.next_cursor;
      } while (cursor !== null);
      return count;
    }

    it('shows, for each of the 30 days, the counts GET /messages lists for that day', async () => {
      const phone = seeded.phones[0]!;
      const moveTo = (id: string, at: number) =>
        test.gateway.store.db.updateTable('messages').set({ created_at: at }).where('id', '=', id).execute();
      const now = Date.now();
      const sent: string[] = [];
      for (let index = 0; index < 4; index += 1)
        sent.push(await api('/send_message', { from_phone: phone, to_phone: `+1415555020${index}`, message: `out ${index}` }));
      const received: string[] = [];
      for (let index = 0; index < 5; index += 1)
        received.push(await api('/sandbox/receive', { from_phone: `+1415555030${index}`, to_phone: phone, message: `in ${index}` }));
      // A failed send, as the engine's refusal leaves it.
      await test.gateway.store.db.updateTable('messages').set({ status: 'failed' }).where('id', '=', sent[3]!).execute();
      // Spread over the period: three days ago, the period's first day, and a day before it (left out).
      await moveTo(sent[0]!, now - 3 * DAY_MS);
      await moveTo(received[0]!, now - 3 * DAY_MS);
      await moveTo(received[1]!, now - 3 * DAY_MS);
      await moveTo(received[2]!, Math.floor(now / DAY_MS) * DAY_MS - 29 * DAY_MS + 1_000);
      await moveTo(sent[1]!, Math.floor(now / DAY_MS) * DAY_MS - 30 * DAY_MS + 1_000);
      // Another account's messages are not this account's chart's.
      await api('/send_message', { from_phone: other.phones[0], to_phone: '+14155550299', message: 'not theirs' }, other.apiKey);

      const page = await client.get('/activity');
      assert.equal(page.statusCode, 200);
      const chart = page.body.slice(page.body.indexOf('id="messages-chart-title"'), page.body.indexOf('id="deliveries-chart-title"'));
      const days = [...chart.matchAll(/data-day="([\d-]+)" data-sent="(\d+)" data-received="(\d+)" data-failed="(\d+)"/g)];
      assert.equal(days.length, 30, 'one bar per day');
      let total = 0;
      for (const [, day, shownSent, shownReceived, shownFailed] of days) {
        const since = `${day}T00:00:00Z`;
        const until = new Date(Date.parse(since) + DAY_MS).toISOString();
        const period = { since, until };
        const left = (
          await Promise.all(['sent', 'delivered', 'read'].map((status) => listed({ ...period, direction: 'outbound', status })))
        ).reduce((sum, count) => sum + count, 0);
        assert.equal(Number(shownSent), left, `${day}: sent`);
        assert.equal(Number(shownReceived), await listed({ ...period, direction: 'inbound' }), `${day}: received`);
        assert.equal(Number(shownFailed), await listed({ ...period, direction: 'outbound', status: 'failed' }), `${day}: failed`);
        total += Number(shownSent) + Number(shownReceived) + Number(shownFailed);
      }
      assert.equal(total, 8, 'every message of the period is counted once, the one before it not at all');
      // The numbers are in the page's table too, for screen readers.
      assert.match(page.body, /The numbers behind the chart/);
      assert.match(page.body, /2 sent, 5 received and 1 failed in the last 30 days\./);
    });

    it('counts the webhook deliveries by where they stand', async () => {
      // A webhook on a closed port: its deliveries wait for their retry (pending) or fail.
      const created = await test.post('/webhooks', { url: 'http://127.0.0.1:9/activity', events: ['message'] }, seeded.apiKey);
      assert.equal(created.statusCode, 201, created.body);
      await api('/sandbox/receive', { from_phone: '+14155550399', to_phone: seeded.phones[0], message: 'for the webhook' });
      const deliveries = await test.gateway.webhooks.listDeliveries(accountScope(seeded.accountId), (created.json() as { id: string }).id);
      assert.ok(deliveries.length >= 1);
      const page = await client.get('/activity');
      const chart = page.body.slice(page.body.indexOf('id="deliveries-chart-title"'), page.body.indexOf('id="latency-chart-title"'));
      const shown = [...chart.matchAll(/data-delivered="(\d+)" data-failed="(\d+)" data-pending="(\d+)"/g)].reduce(
        (sum, match) => sum + Number(match[1]) + Number(match[2]) + Number(match[3]),
        0,
      );
      assert.equal(shown, deliveries.length, 'every delivery is counted once');
    });

    it('shows each day’s webhook attempts, their mean and longest time, as the delivery log lists them', async () => {
      // An account of its own, whose webhook's receiver answers 200 at once: no retry lands between the two reads below.
      const own = await seedAccount(test.gateway, { scopes: ['read', 'send', 'webhooks'] });
      await createTestUser(test.gateway, { accountId: own.accountId, email: 'owner@latency.test', password: PASSWORD, role: 'owner' });
      const owner = new DashboardClient(test);
      assert.equal((await owner.signIn('owner@latency.test', PASSWORD)).statusCode, 303);
      const receiver = await WebhookReceiver.start();
      // The test gateway leaves deliveries to each test; this one needs them made.
      test.gateway.deliveryWorker.start();
      try {
        const created = await test.post('/webhooks', { url: receiver.url('/latency'), events: ['message'] }, own.apiKey);
        assert.equal(created.statusCode, 201, created.body);
        const webhookId = (created.json() as { id: string }).id;
        for (let index = 0; index < 3; index += 1)
          await api(
            '/sandbox/receive',
            { from_phone: `+1415555040${index}`, to_phone: own.phones[0], message: `hook ${index}` },
            own.apiKey,
          );
        const entries = await waitForValue(async () => {
          const listed = await test.gateway.webhooks.listDeliveries(accountScope(own.accountId), webhookId, 10);
          return listed.length === 3 && listed.every((entry) => entry.delivery.state === 'delivered') ? listed : undefined;
        }, 'three delivered webhook deliveries');
        // Times of our choosing, and one delivery (with its attempt) moved three days back, as days passing would.
        const durations = [120, 30, 301];
        const db = test.gateway.store.db;
        for (const [index, entry] of entries.entries()) {
          await db
            .updateTable('webhook_attempts')
            .set({ duration_ms: durations[index]! })
            .where('delivery_id', '=', entry.delivery.id)
            .execute();
        }
        // The other two at one instant, the earlier of theirs: attempts made across 00:00 UTC would otherwise be three days.
        const pinned = Math.min(...entries.slice(1).map((entry) => entry.attempts[0]!.attemptedAt.getTime()));
        await db
          .updateTable('webhook_attempts')
          .set({ attempted_at: pinned })
          .where(
            'delivery_id',
            'in',
            entries.slice(1).map((entry) => entry.delivery.id),
          )
          .execute();
        const moved = entries[0]!.delivery.id;
        const back = pinned - 3 * DAY_MS;
        await db.updateTable('webhook_deliveries').set({ created_at: back }).where('id', '=', moved).execute();
        await db.updateTable('webhook_attempts').set({ attempted_at: back }).where('delivery_id', '=', moved).execute();

        const log = await test.inject({
          method: 'GET',
          url: `/webhooks/${webhookId}/deliveries?limit=100`,
          headers: { authorization: `Bearer ${own.apiKey}` },
        });
        assert.equal(log.statusCode, 200, log.body);
        const attempts = (
          log.json() as { deliveries: Array<{ attempts: Array<{ attempted_at: string; duration_ms: number }> }> }
        ).deliveries.flatMap((delivery) => delivery.attempts);
        const expected = new Map<string, number[]>();
        for (const attempt of attempts) {
          const day = attempt.attempted_at.slice(0, 10);
          expected.set(day, [...(expected.get(day) ?? []), attempt.duration_ms]);
        }
        const shown = chartDays((await owner.get('/activity')).body, 'latency-chart-title', undefined);
        assert.equal(shown.size, 30);
        for (const [day, figures] of shown) {
          const times = expected.get(day) ?? [];
          const mean = times.length === 0 ? 0 : Math.round(times.reduce((sum, time) => sum + time, 0) / times.length);
          assert.deepEqual(
            figures,
            { 'mean-ms': mean, 'longest-ms': times.length === 0 ? 0 : Math.max(...times), attempts: times.length },
            `${day}: the attempts' figures`,
          );
        }
        assert.deepEqual([...expected.values()].map((times) => times.length).sort(), [1, 2], 'two days, three attempts');
        // The attempts' own day, not the clock's: a run that crosses midnight reads the page the next day.
        const today = new Date(pinned).toISOString().slice(0, 10);
        assert.deepEqual(shown.get(today), { 'mean-ms': 166, 'longest-ms': 301, attempts: 2 }, 'today: (30 + 301) / 2, rounded');
      } finally {
        await test.gateway.deliveryWorker.stop();
        await receiver.close();
      }
    });
  });
}
