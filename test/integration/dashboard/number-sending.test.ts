import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { presentNumbers } from '../../../src/dashboard/presenters/numbers.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { findMessageById } from '../../../src/store/repositories/messages.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const PASSWORD = 'correct horse battery';
const HOUR_MS = 3_600_000;
/** Every second send of a number waits a long time; five an hour at most. */
const LONG_GAP = { min_gap_ms: HOUR_MS, max_gap_ms: HOUR_MS, per_hour: 5 };

// The numbers page shows each number's send policy, queue and sends per hour; owners and admins
// change the policy (the number's and the account's default) and clear the queue.
for (const dialect of dialects) {
  describe(`dashboard: a number's sending (${dialect})`, () => {
    let test: TestGateway;
    let seeded: SeededAccount;
    let numberId: string;
    let owner: DashboardClient;
    let member: DashboardClient;
    let outsider: DashboardClient;

    const signedIn = async (accountId: string, role: 'owner' | 'member') => {
      const email = `${role}-${accountId}@sending.test`;
      await createTestUser(test.gateway, { accountId, email, password: PASSWORD, role });
      const client = new DashboardClient(test);
      assert.equal((await client.signIn(email, PASSWORD)).statusCode, 303);
      return client;
    };
    const send = (to = '+14155550100') =>
      test.post('/send_message', { from_phone: seeded.phones[0], to_phone: to, message: 'hi' }, seeded.apiKey);
    const setPolicy = (body: unknown) =>
      test.inject({
        method: 'PATCH',
        url: `/numbers/${numberId}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
        payload: JSON.stringify({ send_policy: body }),
      });
    const numberPolicy = async () => test.gateway.sendQueues.numberPolicy(await test.gateway.numbers.findNumber(operatorScope(), numberId));
    const setSentAt = (id: string, at: number) =>
      test.gateway.store.db.updateTable('messages').set({ sent_at: at }).where('id', '=', id).execute();
    /** The chart's bars, hour start → count, read from the page. */
    const barsOf = (body: string) =>
      new Map(
        [...body.matchAll(/data-hour="([^"]+)" data-sent="(\d+)" data-over-the-cap="(\d+)"/g)].map((match) => [
          match[1]!,
          Number(match[2]) + Number(match[3]),
        ]),
      );

    before(async () => {
      test = await startTestGateway(dialect);
      seeded = await seedAccount(test.gateway);
      numberId = (await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!)).id;
      const otherId = (await test.gateway.accounts.createAccount({ name: 'Globex', plan: 'pro' })).id;
      owner = await signedIn(seeded.accountId, 'owner');
      member = await signedIn(seeded.accountId, 'member');
      outsider = await signedIn(otherId, 'owner');
    });
    after(() => test?.close());

    it('charts the sends of the last 24 hours per hour against the hourly cap, and lists the queue with its reasons', async () => {
      const now = Date.now();
      const thisHour = Math.floor(now / HOUR_MS) * HOUR_MS;
      // Sent with the governor off; then moved back in time, as hours passing would.
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) ids.push((await send()).json().message_id as string);
      for (const id of ids.slice(0, 3)) await setSentAt(id, thisHour - 2 * HOUR_MS + 60_000);
      await setSentAt(ids[3]!, thisHour - 24 * HOUR_MS - 1); // before the chart's first hour
      assert.equal((await setPolicy(LONG_GAP)).statusCode, 200);
      assert.equal((await send()).statusCode, 200, 'the first governed send leaves at once');
      const queued = await send('+14155550111');
      assert.equal(queued.statusCode, 202, queued.body);

      const page = await member.get('/numbers');
      assert.equal(page.statusCode, 200);
      const bars = barsOf(page.body);
      assert.equal(bars.size, 24, 'one bar per hour');
      assert.equal(bars.get(new Date(thisHour - 2 * HOUR_MS).toISOString()), 3);
      assert.equal(bars.get(new Date(thisHour).toISOString()), 2, 'the hour under way: one ungoverned and one governed send');
      assert.equal(
        [...bars.values()].reduce((sum, count) => sum + count, 0),
        5,
        'the send of 24 hours ago is not in the chart',
      );
      assert.match(page.body, /data-cap="5"/, 'the hourly cap is drawn');
      assert.match(page.body, /5 sent in the last 24 hours, against a cap of 5 an hour/);

      assert.match(page.body, /figures of its own/);
      assert.match(page.body, /1 waiting/);
      assert.match(page.body, /1 for the gap between sends/);
      assert.ok(page.body.includes('+14155550111'), 'the waiting message is listed');
      const waiting = (await test.gateway.sendQueues.view(await test.gateway.numbers.findNumber(operatorScope(), numberId), 1, undefined))
        .messages[0]!;
      assert.ok(page.body.includes(`datetime="${waiting.scheduledFor?.toISOString()}"`), 'with the time it leaves');
      assert.doesNotMatch(page.body, /send_policy"|clear_queue"/, 'a member gets no forms');
      assert.match((await owner.get('/numbers')).body, /\/clear_queue"/, 'an owner does');
    });

    it('escapes what it shows of a waiting message', async () => {
      const [waiting] = await test.gateway.store.db
        .selectFrom('messages')
        .select('id')
        .where('number_id', '=', numberId)
        .where('scheduled_for', 'is not', null)
        .execute();
      await test.gateway.store.db
        .updateTable('messages')
        .set({ to_phone: '<b>bold</b>', wait_reason: '<i>why</i>' })
        .where('id', '=', waiting!.id)
        .execute();
      const page = await owner.get('/numbers');
      assert.ok(page.body.includes('&lt;b>bold&lt;/b>') && page.body.includes('&lt;i>why&lt;/i>'), 'shown as text');
      assert.ok(!page.body.includes('<b>bold') && !page.body.includes('<i>why'), 'never as markup');
      await test.gateway.store.db
        .updateTable('messages')
        .set({ to_phone: '+14155550111', wait_reason: 'gap' })
        .where('id', '=', waiting!.id)
        .execute();
    });

    it("refuses a change without the CSRF token, from a member, and on another account's number", async () => {
      const before = await numberPolicy();
      await owner.get('/numbers');
      assert.equal((await owner.post(`/numbers/${numberId}/send_policy`, { send_policy: 'off' }, { csrf: false })).statusCode, 403);
      assert.equal((await owner.post(`/numbers/${numberId}/clear_queue`, {}, { csrf: false })).statusCode, 403);
      assert.equal((await owner.post('/numbers/default_send_policy', { send_policy: 'off' }, { csrf: false })).statusCode, 403);
      assert.equal((await member.submit('/numbers', `/numbers/${numberId}/send_policy`, { send_policy: 'off' })).statusCode, 403);
      assert.equal((await member.submit('/numbers', `/numbers/${numberId}/clear_queue`, {})).statusCode, 403);
      assert.equal((await member.submit('/numbers', '/numbers/default_send_policy', { send_policy: 'off' })).statusCode, 403);
      assert.equal((await outsider.submit('/numbers', `/numbers/${numberId}/send_policy`, { send_policy: 'off' })).statusCode, 404);
      assert.equal((await outsider.submit('/numbers', `/numbers/${numberId}/clear_queue`, {})).statusCode, 404);
      const invalid = await owner.submit('/numbers', `/numbers/${numberId}/send_policy`, { send_policy: 'reckless' });
      assert.equal(invalid.statusCode, 400);
      assert.deepEqual(await numberPolicy(), before, 'none of those changed the policy');
      assert.equal((await test.gateway.sendQueues.accountPolicy(seeded.accountId)).source, 'gateway', "nor the account's");
      const queue = await test.gateway.sendQueues.view(await test.gateway.numbers.findNumber(operatorScope(), numberId), 10, undefined);
      assert.equal(queue.total, 1, 'nor cleared the queue');
    });

    it('an owner sets a preset, keeps figures of its own with "custom", and inherits the account default it sets', async () => {
      assert.equal((await owner.submit('/numbers', `/numbers/${numberId}/send_policy`, { send_policy: 'custom' })).statusCode, 303);
      assert.equal((await numberPolicy()).policy?.per_hour, 5, '"custom" keeps the figures');

      assert.equal((await owner.submit('/numbers', `/numbers/${numberId}/send_policy`, { send_policy: 'cautious' })).statusCode, 303);
      assert.deepEqual([(await numberPolicy()).source, (await numberPolicy()).preset], ['number', 'cautious']);
      assert.match((await owner.get('/numbers')).body, /preset cautious/);

      assert.equal((await owner.submit('/numbers', '/numbers/default_send_policy', { send_policy: 'standard' })).statusCode, 303);
      assert.equal((await owner.submit('/numbers', `/numbers/${numberId}/send_policy`, { send_policy: 'inherit' })).statusCode, 303);
      assert.deepEqual([(await numberPolicy()).source, (await numberPolicy()).preset], ['account', 'standard']);
      const page = (await owner.get('/numbers')).body;
      assert.match(page, /preset standard<\/strong> <span class="muted">\(the account&#39;s default\)/);
      assert.match(page, /data-cap="300"/, 'the chart follows the cap in force');

      assert.equal((await owner.submit('/numbers', '/numbers/default_send_policy', { send_policy: 'inherit' })).statusCode, 303);
      assert.equal((await test.gateway.sendQueues.accountPolicy(seeded.accountId)).source, 'gateway');
    });

    it('an owner clears the queue: its messages are cancelled and never sent', async () => {
      const [waiting] = await test.gateway.store.db
        .selectFrom('messages')
        .select('id')
        .where('number_id', '=', numberId)
        .where('scheduled_for', 'is not', null)
        .execute();
      const cleared = await owner.submit('/numbers', `/numbers/${numberId}/clear_queue`, {});
      assert.equal(cleared.statusCode, 303, cleared.body);
      assert.equal((await findMessageById(test.gateway.store.db, waiting!.id))?.status, 'cancelled');
      const page = (await owner.get('/numbers')).body;
      assert.match(page, /The queue is cleared/);
      assert.match(page, /Nothing waits/);
    });

    it("shows WhatsApp's cap on new chats once it was read: the quota, the used part and the cycle's end", async () => {
      const phone = seeded.phones[0]!;
      assert.doesNotMatch((await member.get('/numbers')).body, /cap on new chats/, 'nothing before the quota is read');
      const rehearsed = await test.post(
        '/sandbox/restrict',
        { phone, kind: 'new_chat_cap', new_chats: 5, lift_after_seconds: 3_600 },
        seeded.apiKey,
      );
      assert.equal(rehearsed.statusCode, 200, rehearsed.body);
      const read = await test.inject({
        method: 'GET',
        url: `/new_chat_quota?from_phone=${encodeURIComponent(phone)}`,
        headers: { authorization: `Bearer ${seeded.apiKey}` },
      });
      assert.equal(read.statusCode, 200, read.body);
      const page = await member.get('/numbers');
      assert.ok(page.body.includes(`0 of 5 used, cycle ends ${rehearsed.json().until}`), 'the card shows the quota');
    });

    it("reads each number's queue once for its sending card and its health card", async () => {
      const reads: string[] = [];
      const sendQueues = test.gateway.sendQueues;
      // overview() reads the queue through this.view, so the proxy sees every read, direct or not.
      const counted = new Proxy(sendQueues, {
        get(target, property, receiver) {
          if (property === 'view')
            return (number: { id: string }, ...rest: unknown[]) => {
              reads.push(number.id);
              return Reflect.apply(target.view, receiver, [number, ...rest]);
            };
          return Reflect.get(target, property, receiver) as unknown;
        },
      });
      const account = { ...(await test.gateway.accounts.getAccount(seeded.accountId)), scope: accountScope(seeded.accountId) };
      const view = await presentNumbers({ ...test.gateway, sendQueues: counted }, account, true);

      assert.deepEqual(reads, [numberId]);
      assert.equal(view.health[0]!.waiting, view.sending[0]!.waiting);
    });
  });
}
