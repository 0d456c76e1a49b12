/**
 * The Activity page's charts (issue 47): each day's bars show what GET /messages lists for the
 * same UTC day (since and until), by direction and status, on both databases; and the webhook
 * chart counts the account's deliveries by where they stand.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

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
  });
}
