import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { usagePeriod } from '../../../src/domain/plans.ts';
import { findMessageById } from '../../../src/store/repositories/messages.ts';
import { monthlyUsed } from '../../../src/store/repositories/usage.ts';
import { listWaitingPage } from '../../../src/store/repositories/waiting-messages.ts';
import { StaleLeaseError } from '../../../src/store/repositories/leases.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { waitForValue } from '../../support/waiting.ts';
import { documentChecker } from '../../support/documented-answers.ts';

/** A policy that makes every second send of a number wait: a gap far longer than a test. */
const LONG_GAP = { min_gap_ms: 3_600_000, max_gap_ms: 3_600_000 };

for (const dialect of dialects) {
  describe(`the send governor through the API (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_SEND_QUEUE_CHECK_MS: '200' });
      receiver = await WebhookReceiver.start();
      test.gateway.queueRunner.start();
    });
    after(async () => {
      await test.close();
      await receiver.close();
    });

    async function account(): Promise<SeededAccount> {
      const seeded = await seedAccount(test.gateway, { monthlyLimit: 100 });
      await test.gateway.webhooks.createWebhook(accountScope(seeded.accountId), {
        url: receiver.url(`/${seeded.accountId}`),
        eventTypes: ['message.status'],
      });
      return seeded;
    }

    const patch = (url: string, body: unknown, apiKey: string) =>
      test.inject({
        method: 'PATCH',
        url,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        payload: JSON.stringify(body),
      });
    const get = (url: string, apiKey: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
    const cancel = (url: string, apiKey: string) => test.inject({ method: 'POST', url, headers: { authorization: `Bearer ${apiKey}` } });
    const send = (seeded: SeededAccount, extra: object = {}, headers: Record<string, string> = {}) =>
      test.post(
        '/send_message',
        { from_phone: seeded.phones[0], to_phone: '+14155550100', message: 'hi', ...extra },
        seeded.apiKey,
        headers,
      );
    const used = (seeded: SeededAccount) => monthlyUsed(test.gateway.store.db, seeded.accountId, usagePeriod(new Date()));
    const statusEvents = async (messageId: string) =>
      (await test.gateway.store.db.selectFrom('webhook_events').select('payload').where('event_type', '=', 'message.status').execute())
        .map((row) => JSON.parse(row.payload) as { message_id: string; status: string })
        .filter((event) => event.message_id === messageId)
        .map((event) => event.status);

    /** The message's status_history holds these statuses in order, each at or after the one before. */
    async function assertHistory(seeded: SeededAccount, id: string, statuses: string[]) {
      const read = await get(`/messages/${id}`, seeded.apiKey);
      assert.equal(read.statusCode, 200, read.body);
      const history = read.json().status_history as { status: string; at: string }[];
      assert.deepEqual(
        history.map((entry) => entry.status),
        statuses,
        read.body,
      );
      const times = history.map((entry) => Date.parse(entry.at));
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
        'oldest first',
      );
    }

    /** What `read` gives once `done` holds of it (test/support/waiting.ts). */
    function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
      return waitForValue(async () => {
        const value = await read();
        return done(value) ? value : undefined;
      }, 'the message to leave the queue');
    }

    /**
     * The first of the number's next sends that the governor holds back for its gap. One that
     * came after the gap had passed since the last (a busy machine can take longer than the gap
     * between two requests) is sent at once, and the next is tried.
     */
    async function queuedSend(seeded: SeededAccount, extra: object = {}) {
      return waitForValue(async () => {
        const response = await send(seeded, extra);
        if (response.statusCode === 202) return response;
        assert.deepEqual([response.statusCode, response.json().status], [200, 'sent'], response.body);
        return undefined;
      }, 'a send held back for the gap');
    }

    // Side by side: each test seeds its own account and number, and reads only its own messages, events, units and queue.
    describe('each on a number of its own', { concurrency: true }, () => {
      it("off by default: a send is answered 200 sent, and none of the governor's columns is written", async () => {
        const seeded = await account();
        const response = await send(seeded);
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json().status, 'sent');
        const row = await test.gateway.store.db
          .selectFrom('messages')
          .select(['scheduled_for', 'released_at', 'wait_reason', 'first_contact'])
          .where('id', '=', response.json().message_id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(row, { scheduled_for: null, released_at: null, wait_reason: null, first_contact: null });
      });

      it('governed sends made at once each go with their unit and first contact counted, and each shows in the chat list', async () => {
        const seeded = await account();
        // Caps far above the sends, to twelve recipients at once: decided one after another under
        // the number's lock, written together (ADR 0048), each a first contact.
        const permissive = { per_minute: 1_000, per_hour: 1_000, per_day: 1_000, first_contacts_per_day: 1_000 };
        const policy = await patch(`/numbers/${encodeURIComponent(seeded.phones[0]!)}`, { send_policy: permissive }, seeded.apiKey);
        assert.equal(policy.statusCode, 200, policy.body);
        const recipients = Array.from({ length: 12 }, (_, index) => `+1415555${String(200 + index).padStart(4, '0')}`);
        const answers = await Promise.all(recipients.map((to_phone) => send(seeded, { to_phone, message: `to ${to_phone}` })));
        for (const answer of answers) assert.deepEqual([answer.statusCode, answer.json().status], [200, 'sent'], answer.body);
        assert.equal(await used(seeded), recipients.length, 'one unit each');
        const firstContacts = await test.gateway.store.db
          .selectFrom('messages')
          .select(['to_phone', 'first_contact', 'released_at'])
          .where(
            'id',
            'in',
            answers.map((answer) => answer.json().message_id as string),
          )
          .execute();
        assert.deepEqual(
          firstContacts.map((row) => [row.first_contact, row.released_at === null]),
          recipients.map(() => [1, false]),
          'each a first contact, released as it was sent',
        );
        const chats = await get(`/chats?from_phone=${encodeURIComponent(seeded.phones[0]!)}&limit=100`, seeded.apiKey);
        assert.equal(chats.statusCode, 200, chats.body);
        const listed = new Map(
          (chats.json().chats as { phone: string; last_message: { message_id: string } }[]).map((chat) => [chat.phone, chat]),
        );
        for (const [index, to] of recipients.entries())
          assert.equal(listed.get(to)?.last_message.message_id, answers[index]!.json().message_id, `the chat with ${to} shows its send`);
      });

      it('a message the policy lets go is 200 sent; the next one, inside the gap, is 202 queued with scheduled_for', async () => {
        const seeded = await account();
        const policy = await patch(`/numbers/${encodeURIComponent(seeded.phones[0]!)}`, { send_policy: LONG_GAP }, seeded.apiKey);
        assert.equal(policy.statusCode, 200, policy.body);
        assert.equal(policy.json().send_policy.source, 'number');
        const first = await send(seeded);
        assert.equal(first.statusCode, 200, first.body);
        assert.equal(first.json().status, 'sent');
        const before = Date.now();
        const second = await send(seeded);
        assert.equal(second.statusCode, 202, second.body);
        const body = second.json();
        assert.equal(body.status, 'queued');
        assert.equal(body.wait_reason, 'gap');
        const due = Date.parse(body.scheduled_for);
        assert.ok(due >= before + 3_590_000 && due <= Date.now() + 3_600_000, body.scheduled_for);
        assert.ok(Date.parse(body.expires_at) > due, 'it expires a day after it was queued');
        assert.equal((await findMessageById(test.gateway.store.db, body.message_id))?.status, 'queued');
        assert.equal(await used(seeded), 2, 'the unit is taken when the message is queued');
      });

      it('a queued message is sent by the runner when it is due, with a sent event', async () => {
        const seeded = await account();
        await patch(
          `/numbers/${encodeURIComponent(seeded.phones[0]!)}`,
          { send_policy: { min_gap_ms: 1_500, max_gap_ms: 1_500 } },
          seeded.apiKey,
        );
        assert.equal((await send(seeded)).statusCode, 200);
        const queued = await queuedSend(seeded);
        const id = queued.json().message_id as string;
        const sent = await until(
          () => findMessageById(test.gateway.store.db, id),
          (message) => message?.status !== 'queued',
        );
        assert.ok(['sent', 'delivered'].includes(sent!.status), sent!.status);
        assert.ok(sent!.times!.sent!.getTime() >= Date.parse(queued.json().scheduled_for), 'never before its time');
        assert.deepEqual((await statusEvents(id)).slice(0, 1), ['sent']);
      });

      it('send_at schedules a message even with the governor off; past the horizon it is refused', async () => {
        const seeded = await account();
        const at = new Date(Date.now() + 86_400_000).toISOString();
        const scheduled = await send(seeded, { send_at: at });
        assert.equal(scheduled.statusCode, 202, scheduled.body);
        assert.equal(scheduled.json().wait_reason, 'scheduled');
        assert.equal(scheduled.json().scheduled_for, at);
        const tooFar = await send(seeded, { send_at: new Date(Date.now() + 31 * 86_400_000).toISOString() });
        assert.equal(tooFar.statusCode, 400);
        assert.equal(tooFar.json().error, 'invalid_schedule');
        const noZone = await send(seeded, { send_at: '2030-01-01T10:00:00' });
        assert.equal(noZone.statusCode, 400);
        assert.equal(noZone.json().error, 'invalid_request');
        const expiresFirst = await send(seeded, { send_at: at, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
        assert.equal(expiresFirst.json().error, 'invalid_schedule');
      });

      it('wait: true answers 200 sent once the queued message has left; Prefer: wait=N answers 202 after N seconds', async () => {
        const seeded = await account();
        await patch(
          `/numbers/${encodeURIComponent(seeded.phones[0]!)}`,
          { send_policy: { min_gap_ms: 500, max_gap_ms: 500 } },
          seeded.apiKey,
        );
        assert.equal((await send(seeded)).statusCode, 200);
        const waited = await send(seeded, { wait: true });
        assert.equal(waited.statusCode, 200, waited.body);
        assert.equal(waited.json().status, 'sent');
        assert.equal(waited.json().scheduled_for, undefined);
        await patch(`/numbers/${encodeURIComponent(seeded.phones[0]!)}`, { send_policy: LONG_GAP }, seeded.apiKey);
        const started = Date.now();
        const timedOut = await send(seeded, {}, { prefer: 'wait=1' });
        assert.equal(timedOut.statusCode, 202, timedOut.body);
        assert.ok(Date.now() - started >= 900, 'it waited about a second');
      });

      it('cancel: a queued message becomes cancelled with an event, its unit comes back, and a second cancel is 409', async () => {
        const seeded = await account();
        const id = (await send(seeded, { send_at: new Date(Date.now() + 3_600_000).toISOString() })).json().message_id as string;
        assert.equal(await used(seeded), 1);
        const cancelled = await cancel(`/messages/${id}/cancel`, seeded.apiKey);
        assert.equal(cancelled.statusCode, 200, cancelled.body);
        assert.equal(cancelled.json().status, 'cancelled');
        assert.equal(await used(seeded), 0, 'the unit is given back');
        assert.deepEqual(await statusEvents(id), ['cancelled']);
        await assertHistory(seeded, id, ['queued', 'cancelled']);
        const again = await cancel(`/api/messages/${id}/cancel`, seeded.apiKey);
        assert.equal(again.statusCode, 409);
        assert.equal(again.json().error, 'message_not_cancellable');
        assert.equal(again.json().meta.status, 'cancelled');
        const sent = (await send(seeded)).json().message_id as string;
        const late = await cancel(`/messages/${sent}/cancel`, seeded.apiKey);
        assert.equal(late.statusCode, 409);
      });

      it('expiry: a message still waiting at expires_at becomes expired with an event, is never sent, and its unit comes back', async () => {
        const seeded = await account();
        const response = await send(seeded, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
        const id = response.json().message_id as string;
        // The row's expiry is moved into the past, as time passing would.
        await test.gateway.store.db
          .updateTable('messages')
          .set({ expires_at: Date.now() - 1 })
          .where('id', '=', id)
          .execute();
        test.gateway.queueRunner.wakeBy(new Date());
        const expired = await until(
          () => findMessageById(test.gateway.store.db, id),
          (message) => message?.status !== 'queued',
        );
        assert.equal(expired?.status, 'expired');
        assert.equal(expired?.engineMessageId, null, 'never sent');
        assert.equal(await used(seeded), 0);
        assert.deepEqual(await statusEvents(id), ['expired']);
        await assertHistory(seeded, id, ['queued', 'expired']);
      });

      it('DELETE /numbers/{id}/queue cancels every waiting message and gives their units back', async () => {
        const seeded = await account();
        await patch(`/numbers/${encodeURIComponent(seeded.phones[0]!)}`, { send_policy: LONG_GAP }, seeded.apiKey);
        await send(seeded);
        const ids = [];
        for (let index = 0; index < 3; index++) ids.push((await send(seeded)).json().message_id as string);
        const queue = await get(`/numbers/${encodeURIComponent(seeded.phones[0]!)}/queue?limit=2`, seeded.apiKey);
        assert.equal(queue.statusCode, 200, queue.body);
        assert.equal(queue.json().total, 3);
        assert.deepEqual(queue.json().counts, { gap: 3 });
        assert.deepEqual(
          queue.json().messages.map((message: { message_id: string }) => message.message_id),
          ids.slice(0, 2),
          'in the order they leave',
        );
        assert.ok(
          Date.parse(queue.json().messages[1].scheduled_for) - Date.parse(queue.json().messages[0].scheduled_for) >= 3_600_000,
          'each a gap after the one before',
        );
        const rest = await get(
          `/api/numbers/${encodeURIComponent(seeded.phones[0]!)}/queue?limit=2&cursor=${queue.json().next_cursor}`,
          seeded.apiKey,
        );
        assert.deepEqual(
          rest.json().messages.map((message: { message_id: string }) => message.message_id),
          ids.slice(2),
        );
        assert.equal(rest.json().next_cursor, null);
        assert.equal(await used(seeded), 4);
        const cleared = await test.inject({
          method: 'DELETE',
          url: `/numbers/${encodeURIComponent(seeded.phones[0]!)}/queue`,
          headers: { authorization: `Bearer ${seeded.apiKey}` },
        });
        assert.equal(cleared.statusCode, 200, cleared.body);
        assert.equal(cleared.json().cancelled, 3);
        assert.equal(cleared.json().pending, 0, 'a short queue is settled within the answer');
        assert.equal(await used(seeded), 1);
        for (const id of ids) {
          assert.equal((await findMessageById(test.gateway.store.db, id))?.status, 'cancelled');
          // Cleared with the queue, each records its cancellation as a message cancelled alone does.
          await assertHistory(seeded, id, ['queued', 'cancelled']);
        }
        assert.equal((await get(`/numbers/${encodeURIComponent(seeded.phones[0]!)}/queue`, seeded.apiKey)).json().total, 0);
      });

      it('a queue longer than a batch is answered 202 at once: none of it leaves, the view shows it cancelling, the runner settles the rest', async () => {
        const seeded = await account();
        const phone = seeded.phones[0]!;
        await patch(`/numbers/${encodeURIComponent(phone)}`, { send_policy: LONG_GAP }, seeded.apiKey);
        const number = await test.gateway.store.db
          .selectFrom('whatsapp_numbers')
          .select('id')
          .where('phone', '=', phone)
          .executeTakeFirstOrThrow();
        // Written as the send path leaves them (faster than 1,200 sends), a second apart from an hour ahead.
        const waiting = 1_200;
        const now = Date.now();
        const rows = Array.from({ length: waiting }, (_, index) => ({
          id: `msg_clear${String(index).padStart(5, '0')}${dialect}${now}`,
          account_id: seeded.accountId,
          number_id: number.id,
          direction: 'outbound',
          from_phone: phone,
          to_phone: '+14155550100',
          text: `waiting ${index}`,
          content_kind: 'text',
          status: 'queued',
          created_at: now,
          updated_at: now,
          scheduled_for: now + 3_600_000 + index * 1_000,
          expires_at: now + 86_400_000,
          wait_reason: 'gap',
          first_contact: 0,
        }));
        for (let start = 0; start < waiting; start += 400)
          await test.gateway.store.db
            .insertInto('messages')
            .values(rows.slice(start, start + 400))
            .execute();
        const cleared = await test.inject({
          method: 'DELETE',
          url: `/numbers/${encodeURIComponent(phone)}/queue`,
          headers: { authorization: `Bearer ${seeded.apiKey}` },
        });
        assert.equal(cleared.statusCode, 202, cleared.body);
        assert.equal(cleared.json().cancelled, waiting);
        // Longer than one settling batch: answered at once, the runner settles it (ADR 0048).
        assert.ok(cleared.json().pending > 0 && cleared.json().pending <= waiting, cleared.body);
        const remaining = (await get(`/numbers/${encodeURIComponent(phone)}/queue?limit=1`, seeded.apiKey)).json();
        assert.ok(remaining.total === 0 || Object.keys(remaining.counts).join() === 'cancelling', JSON.stringify(remaining.counts));
        // A send after the clear is placed in an empty queue: the cleared messages hold no place in it.
        assert.equal((await send(seeded)).statusCode, 200);
        await until(
          async () => (await get(`/numbers/${encodeURIComponent(phone)}/queue?limit=1`, seeded.apiKey)).json().total as number,
          (total) => total === 0,
        );
        const statuses = await test.gateway.store.db
          .selectFrom('messages')
          .select(['status', (eb) => eb.fn.countAll<number | string>().as('count')])
          .where(
            'id',
            'in',
            rows.map((row) => row.id),
          )
          .groupBy('status')
          .execute();
        assert.deepEqual(
          statuses.map((row) => [row.status, Number(row.count)]),
          [['cancelled', waiting]],
        );
        assert.deepEqual(await statusEvents(rows.at(-1)!.id), ['cancelled']);
      });

      it('an Idempotency-Key replays a 202 as 202, and queues nothing more', async () => {
        const seeded = await account();
        const headers = { 'idempotency-key': `governed-${seeded.accountId}` };
        const first = await send(seeded, { send_at: new Date(Date.now() + 3_600_000).toISOString() }, headers);
        const sameBodyLater = await send(seeded, { send_at: new Date(Date.now() + 3_600_000).toISOString() }, headers);
        assert.equal(first.statusCode, 202, first.body);
        assert.equal(sameBodyLater.statusCode, 202, sameBodyLater.body);
        assert.equal(sameBodyLater.headers['idempotent-replayed'], 'true');
        assert.equal(sameBodyLater.json().message_id, first.json().message_id);
        assert.equal(await used(seeded), 1);
      });

      it('a release under a lease the node no longer holds is refused before the engine is asked', async () => {
        const seeded = await account();
        const id = (await send(seeded, { send_at: new Date(Date.now() + 3_600_000).toISOString() })).json().message_id as string;
        const number = await test.gateway.numbers.findNumber(accountScope(seeded.accountId), seeded.phones[0]!);
        const lease = test.gateway.keeper.leaseOf(number.id)!;
        const [waiting] = await listWaitingPage(test.gateway.store.db, number.id, 1);
        const row = (await findMessageById(test.gateway.store.db, id))!;
        await assert.rejects(
          test.gateway.sender.sendReleased(number, waiting!, row, { ...lease, epoch: lease.epoch + 1 }),
          StaleLeaseError,
        );
        const message = await findMessageById(test.gateway.store.db, id);
        assert.equal(message?.status, 'queued');
        assert.equal(message?.engineMessageId, null, 'never handed to the engine');
        assert.equal((await listWaitingPage(test.gateway.store.db, number.id, 1))[0]?.id, id, 'still waiting');
      });

      it("the policy in force is the number's, else the account's, else the gateway's", async () => {
        const seeded = await account();
        const phone = encodeURIComponent(seeded.phones[0]!);
        assert.deepEqual((await get('/account/send_policy', seeded.apiKey)).json(), { source: 'gateway', preset: 'off', policy: null });
        const accountWide = await patch('/api/account/send_policy', { send_policy: 'cautious' }, seeded.apiKey);
        assert.equal(accountWide.statusCode, 200, accountWide.body);
        assert.equal(accountWide.json().policy.first_contacts_per_day, 15);
        assert.equal((await get(`/numbers/${phone}/queue`, seeded.apiKey)).json().send_policy.source, 'account');
        await patch(`/numbers/${phone}`, { send_policy: 'standard' }, seeded.apiKey);
        assert.deepEqual((await get(`/numbers/${phone}/queue`, seeded.apiKey)).json().send_policy.preset, 'standard');
        await patch(`/numbers/${phone}`, { send_policy: null }, seeded.apiKey);
        assert.equal((await get(`/numbers/${phone}/queue`, seeded.apiKey)).json().send_policy.source, 'account');
        const refused = await patch(
          `/numbers/${phone}`,
          { send_policy: { quiet_hours: { start: '22:00', end: '08:00', time_zone: 'Nowhere/Atlantis' } } },
          seeded.apiKey,
        );
        assert.equal(refused.statusCode, 400);
        assert.equal(refused.json().error, 'invalid_send_policy');
        const unknownField = await patch(`/numbers/${phone}`, { send_policy: { min_gap: 5 } }, seeded.apiKey);
        assert.equal(unknownField.statusCode, 400);
      });

      it('a paused governed number queues its sends (202, paused) instead of refusing them, and sends them once it resumes', async () => {
        const seeded = await account();
        const phone = encodeURIComponent(seeded.phones[0]!);
        assert.equal((await patch(`/numbers/${phone}`, { send_policy: 'standard' }, seeded.apiKey)).statusCode, 200);
        const paused = await test.inject({
          method: 'POST',
          url: `/numbers/${phone}/pause`,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
          payload: '{}',
        });
        assert.equal(paused.statusCode, 200, paused.body);
        const queued = await send(seeded);
        assert.equal(queued.statusCode, 202, queued.body);
        assert.deepEqual([queued.json().status, queued.json().wait_reason, queued.json().scheduled_for], ['queued', 'paused', null]);
        // Held: the runner looks again every 200 ms, and leaves it where it is.
        await sleep(600);
        assert.equal((await findMessageById(test.gateway.store.db, queued.json().message_id))?.status, 'queued');
        const resumed = await test.inject({
          method: 'POST',
          url: `/numbers/${phone}/resume`,
          headers: { authorization: `Bearer ${seeded.apiKey}` },
        });
        assert.equal(resumed.statusCode, 200, resumed.body);
        const left = await until(
          () => findMessageById(test.gateway.store.db, queued.json().message_id),
          (message) => message?.engineMessageId != null,
        );
        assert.ok(left?.status === 'sent' || left?.status === 'delivered', `left the queue once resumed, now ${left?.status}`);
        assert.ok(left?.engineMessageId, 'handed to the network');
      });

      it('a paused number reports its queue as waiting for the pause: until its lift time, or scheduled_for null until resumed', async () => {
        const seeded = await account();
        const phone = encodeURIComponent(seeded.phones[0]!);
        assert.equal((await patch(`/numbers/${phone}`, { send_policy: LONG_GAP }, seeded.apiKey)).statusCode, 200);
        assert.equal((await send(seeded)).statusCode, 200);
        const gapped = await send(seeded);
        assert.deepEqual([gapped.statusCode, gapped.json().wait_reason], [202, 'gap'], gapped.body);
        // A restriction that lifts after the gap: everything waits for its lift time.
        const restricted = await test.post(
          '/sandbox/restrict',
          { phone: seeded.phones[0], kind: 'restricted', lift_after_seconds: 10_800 },
          seeded.apiKey,
        );
        assert.equal(restricted.statusCode, 200, restricted.body);
        const until = restricted.json().until as string;
        const timed = await waitForValue(async () => {
          const queue = (await get(`/numbers/${phone}/queue`, seeded.apiKey)).json();
          return queue.counts.paused === 1 ? queue : undefined;
        }, 'the queue to wait for the restriction');
        assert.deepEqual(
          [
            timed.counts,
            timed.next_scheduled_for,
            timed.messages.map((m: { wait_reason: string; scheduled_for: string }) => [m.wait_reason, m.scheduled_for]),
          ],
          [{ paused: 1 }, until, [['paused', until]]],
        );
        const duringRestriction = await send(seeded);
        assert.deepEqual([duringRestriction.statusCode, duringRestriction.json().wait_reason], [202, 'paused'], duringRestriction.body);
        assert.ok(Date.parse(duringRestriction.json().scheduled_for) >= Date.parse(until), duringRestriction.body);
        // Paused by hand, until someone resumes it: no time can be named.
        const paused = await test.post(`/numbers/${phone}/pause`, {}, seeded.apiKey);
        assert.equal(paused.statusCode, 200, paused.body);
        const byHand = (await get(`/api/numbers/${phone}/queue`, seeded.apiKey)).json();
        assert.deepEqual(
          [
            byHand.counts,
            byHand.next_scheduled_for,
            byHand.messages.map((m: { wait_reason: string; scheduled_for: string | null }) => [m.wait_reason, m.scheduled_for]),
          ],
          [
            { paused: 2 },
            null,
            [
              ['paused', null],
              ['paused', null],
            ],
          ],
        );
        const whilePaused = await send(seeded);
        assert.deepEqual(
          [whilePaused.statusCode, whilePaused.json().wait_reason, whilePaused.json().scheduled_for],
          [202, 'paused', null],
          whilePaused.body,
        );
      });

      it('a queued poll and queued contact cards are answered 202 with what was queued, as the document describes', async () => {
        const seeded = await account();
        const check = documentChecker((await test.inject({ method: 'GET', url: '/openapi.json' })).json());
        const later = { send_at: new Date(Date.now() + 3_600_000).toISOString() };
        const poll = await send(seeded, { message: undefined, poll: { question: 'Later?', options: ['Yes', 'No'] }, ...later });
        assert.equal(poll.statusCode, 202, poll.body);
        assert.deepEqual([poll.json().poll.question, poll.json().poll.options], ['Later?', ['Yes', 'No']], poll.body);
        const card = await send(seeded, {
          message: undefined,
          contacts: [{ name: 'Ada Lovelace', phones: ['+44 7700 900123'] }],
          ...later,
        });
        assert.equal(card.statusCode, 202, card.body);
        assert.deepEqual([card.json().contacts[0].name, card.json().contacts[0].phones], ['Ada Lovelace', ['+447700900123']], card.body);
        for (const answer of [poll, card]) {
          const problem = check({
            method: 'POST',
            path: '/send_message',
            status: answer.statusCode,
            contentType: String(answer.headers['content-type']),
            body: answer.body,
          });
          assert.equal(problem, undefined, problem);
        }
      });

      it('a number resumed before its lift time sends what waited for the pause then, not at the lift time', async () => {
        const seeded = await account();
        const phone = encodeURIComponent(seeded.phones[0]!);
        await patch(`/numbers/${phone}`, { send_policy: { min_gap_ms: 300, max_gap_ms: 300 } }, seeded.apiKey);
        const number = await test.gateway.numbers.findNumber(accountScope(seeded.accountId), seeded.phones[0]!);
        const restricted = await test.post(
          '/sandbox/restrict',
          { phone: seeded.phones[0], kind: 'restricted', lift_after_seconds: 10_800 },
          seeded.apiKey,
        );
        assert.equal(restricted.statusCode, 200, restricted.body);
        await waitForValue(() => test.gateway.pauses.holdOf(number.id) ?? undefined, 'the restriction to pause the number');
        const queued = await send(seeded);
        assert.deepEqual(
          [queued.statusCode, queued.json().wait_reason, queued.json().scheduled_for],
          [202, 'paused', restricted.json().until],
        );
        const resumed = await test.inject({
          method: 'POST',
          url: `/numbers/${phone}/resume`,
          headers: { authorization: `Bearer ${seeded.apiKey}` },
        });
        assert.equal(resumed.statusCode, 200, resumed.body);
        // Released now rather than at the lift time three hours on (what the simulated network then
        // does with it, still restricting the number, is its own business).
        const left = await until(
          () => findMessageById(test.gateway.store.db, queued.json().message_id),
          (message) => message?.status !== 'queued',
        );
        assert.notEqual(left?.status, 'queued');
      });

      it('an ungoverned paused number still refuses a send with 503 number_paused', async () => {
        const seeded = await account();
        const phone = encodeURIComponent(seeded.phones[0]!);
        await test.inject({
          method: 'POST',
          url: `/numbers/${phone}/pause`,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
          payload: '{}',
        });
        const refused = await send(seeded);
        assert.deepEqual([refused.statusCode, refused.json().error], [503, 'number_paused']);
      });
    });

    // Alone: a pass of the queue runner waits out a message's typing, holding back what falls due on other numbers meanwhile.
    it('typing_before_send: a queued message leaves after "typing…" for a time that grows with its text', async () => {
      const seeded = await account();
      await patch(
        `/numbers/${encodeURIComponent(seeded.phones[0]!)}`,
        { send_policy: { min_gap_ms: 300, max_gap_ms: 300, typing_before_send: true } },
        seeded.apiKey,
      );
      assert.equal((await send(seeded)).statusCode, 200, 'a message the policy lets go at once is not held back for typing');
      const queued = await queuedSend(seeded, { message: 'x' });
      const sent = await until(
        () => findMessageById(test.gateway.store.db, queued.json().message_id),
        (message) => message?.status !== 'queued',
      );
      const typedMs = sent!.times!.sent!.getTime() - Date.parse(queued.json().scheduled_for);
      assert.ok(typedMs >= 1_300, `typing showed ${typedMs} ms for one character (1 s + 0.3 s a character)`);
    });

    // Alone: the sweep looks at every account's sends, and would fail a send of a test running beside it.
    it('the interrupted-send sweep never touches a waiting message', async () => {
      const seeded = await account();
      const id = (await send(seeded, { send_at: new Date(Date.now() + 3_600_000).toISOString() })).json().message_id as string;
      await test.gateway.sender.failInterruptedSends(new Date(Date.now() + 60_000));
      assert.equal((await findMessageById(test.gateway.store.db, id))?.status, 'queued');
      assert.equal(await used(seeded), 1);
    });
  });
}
