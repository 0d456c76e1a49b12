import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { findMessageById } from '../../../src/store/repositories/messages.ts';
import { setNumberSendPolicy } from '../../../src/store/repositories/send-policies.ts';
import { newId } from '../../../src/domain/ids.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

/**
 * One number's queue is never another's wait (issue 38, items 1 and 3; ADR 0042): a number whose
 * policy cannot be decided, or whose backlog is large, or that shows "typing…", holds itself only.
 */
const LEFT = ['sent', 'delivered', 'read'];

for (const dialect of dialects) {
  describe(`the queue runner serves each number on its own (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_SEND_QUEUE_CHECK_MS: '200' });
      test.gateway.queueRunner.start();
    });
    after(() => test.close());

    const patchPolicy = (seeded: SeededAccount, policy: unknown) =>
      test.inject({
        method: 'PATCH',
        url: `/numbers/${encodeURIComponent(seeded.phones[0]!)}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
        payload: JSON.stringify({ send_policy: policy }),
      });
    const send = (seeded: SeededAccount, extra: object = {}) =>
      test.post('/send_message', { from_phone: seeded.phones[0], to_phone: '+14155550100', message: 'hi', ...extra }, seeded.apiKey);
    const status = async (id: string) => (await findMessageById(test.gateway.store.db, id))?.status;
    const numberId = async (seeded: SeededAccount) => (await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!)).id;

    async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await read();
        if (done(value) || Date.now() > deadline) return value;
        await sleep(25);
      }
    }

    /** A message of the other account due in a moment, which must leave while the first account's queue is stuck. */
    async function otherAccountsSendLeaves(): Promise<void> {
      const other = await seedAccount(test.gateway, { monthlyLimit: 100 });
      // Queued an hour ahead (202 however slow the machine; 300 ms ahead had passed before a loaded
      // machine decided it, and it was sent at once with a 200), then made due at once.
      const queued = await send(other, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(queued.statusCode, 202, queued.body);
      const id = queued.json().message_id as string;
      await dueNow(await numberId(other));
      assert.ok(
        LEFT.includes(
          String(
            await until(
              () => status(id),
              (value) => value !== 'queued',
            ),
          ),
        ),
        "the other account's message left",
      );
      const health = await test.inject({ method: 'GET', url: '/health' });
      assert.equal(health.statusCode, 200, 'and the gateway answers meanwhile');
    }

    /** Makes every waiting message of the number due now, and wakes the runner for it. */
    async function dueNow(id: string): Promise<void> {
      await test.gateway.store.db
        .updateTable('messages')
        .set({ scheduled_for: Date.now() })
        .where('number_id', '=', id)
        .where('scheduled_for', 'is not', null)
        .execute();
      test.gateway.governor.queuedListener(new Date());
    }

    it('a cap of 0 and a warm-up starting at 0 are refused on write with a 400, and nothing is stored', async () => {
      const seeded = await seedAccount(test.gateway);
      for (const [policy, field] of [
        [{ per_minute: 0 }, 'per_minute'],
        [{ per_day: 0 }, 'per_day'],
        [{ first_contacts_per_day: 0 }, 'first_contacts_per_day'],
        [{ warm_up: { start: 0, daily_increase: 5 } }, 'warm_up'],
      ] as const) {
        const response = await patchPolicy(seeded, policy);
        assert.equal(response.statusCode, 400, `${field}: ${response.body}`);
      }
      const stored = await test.gateway.store.db
        .selectFrom('whatsapp_numbers')
        .select('send_policy')
        .where('id', '=', await numberId(seeded))
        .executeTakeFirstOrThrow();
      assert.equal(stored.send_policy, null, 'nothing refused was stored');
      assert.equal((await patchPolicy(seeded, { per_minute: 1, per_day: null })).statusCode, 200, 'a cap of 1 and null are taken');
    });

    it("with 500 due messages of one account under a stored cap of 0, another account's queued send leaves on time", async () => {
      const stuck = await seedAccount(test.gateway, { monthlyLimit: 1_000 });
      const first = await send(stuck, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(first.statusCode, 202, first.body);
      // 499 more rows like the first, written at once: 500 sends through the API cost seconds of the suite.
      const row = await test.gateway.store.db
        .selectFrom('messages')
        .selectAll()
        .where('id', '=', first.json().message_id)
        .executeTakeFirstOrThrow();
      await test.gateway.store.db
        .insertInto('messages')
        .values(Array.from({ length: 499 }, () => ({ ...row, id: newId('message') })))
        .execute();
      // A setting stored before caps were checked on write, and every message of the number due now.
      const stuckNumber = await numberId(stuck);
      await setNumberSendPolicy(test.gateway.store.db, stuckNumber, JSON.stringify({ per_minute: 0, per_day: 0 }));
      await test.gateway.store.db
        .updateTable('messages')
        .set({ scheduled_for: Date.now() })
        .where('number_id', '=', stuckNumber)
        .where('scheduled_for', 'is not', null)
        .execute();
      await otherAccountsSendLeaves();
      const stillQueued = await test.gateway.store.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('number_id', '=', stuckNumber)
        .where('status', '=', 'queued')
        .executeTakeFirstOrThrow();
      assert.ok(Number(stillQueued.count) >= 498, `the capped number keeps its queue (${stillQueued.count} queued)`);
    });

    it('a stored policy that cannot be read holds its own number only, and its messages wait for the next look', async () => {
      const broken = await seedAccount(test.gateway);
      // Queued an hour ahead (202 however slow the machine), then made due at once below.
      const queued = await send(broken, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(queued.statusCode, 202, queued.body);
      const brokenNumber = await numberId(broken);
      await setNumberSendPolicy(test.gateway.store.db, brokenNumber, '{not json');
      const dueAt = Date.now();
      await dueNow(brokenNumber);
      await otherAccountsSendLeaves();
      const row = await test.gateway.store.db
        .selectFrom('messages')
        .select(['status', 'scheduled_for'])
        .where('id', '=', queued.json().message_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'queued');
      assert.ok(Number(row.scheduled_for) > dueAt, 'held back, not retried in a loop');
    });

    it('one number showing "typing…" before its message never delays another number\'s due message', async () => {
      const typist = await seedAccount(test.gateway);
      assert.equal((await patchPolicy(typist, { typing_before_send: true })).statusCode, 200);
      // 30 characters: typing shows for the longest, 8 s. Queued an hour ahead (202 however slow
      // the machine), then made due: the typist's first, the other's a moment later.
      const typed = await send(typist, { message: 'x'.repeat(30), send_at: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(typed.statusCode, 202, typed.body);
      const other = await seedAccount(test.gateway);
      const quick = await send(other, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(quick.statusCode, 202, quick.body);
      await dueNow(await numberId(typist));
      await dueNow(await numberId(other));
      const quickId = quick.json().message_id as string;
      assert.ok(
        LEFT.includes(
          String(
            await until(
              () => status(quickId),
              (value) => value !== 'queued',
            ),
          ),
        ),
      );
      assert.equal(await status(typed.json().message_id), 'queued', 'the other number was still typing when this one left');
    });
  });
}
