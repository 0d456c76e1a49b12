import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { Message, SessionLease, WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { messageStatusPayload } from '../../../src/domain/event-payloads.ts';
import { GroupCommitter } from '../../../src/store/group-commit.ts';
import { StaleLeaseError } from '../../../src/store/repositories/leases.ts';
import { insertMessage } from '../../../src/store/repositories/messages.ts';
import { queueSentRecord, queueStatusAdvance, type BatchOutcome } from '../../../src/store/repositories/status-writes.ts';
import { insertWebhook } from '../../../src/store/repositories/webhooks.ts';
import { queueEvent, type DeliveryNotifier, type Enqueued } from '../../../src/webhooks/outbox.ts';
import { countingStatements, dialects, seedNumberRow, suiteStore, type Dialect } from '../../support/databases.ts';
import { holdLease } from '../../support/leases.ts';

// A batch's sent records and receipts are fenced and written at its end, each kind once per
// batch: its statements do not grow with the number of sends in it. Begin and commit aside, a
// batch takes the fence, one update and the events with their deliveries (one statement on
// PostgreSQL, two on SQLite), whether it holds one send or twenty.
const STATEMENTS_PER_BATCH: Record<Dialect, number> = { postgres: 3, sqlite: 4 };

for (const dialect of dialects) {
  describe(`status writes once per batch (${dialect})`, () => {
    const suite = suiteStore(dialect);

    /** A number whose lease a stand-in node holds, a webhook on its account hearing statuses, and `count` queued sends. */
    async function seed(
      count: number,
    ): Promise<{ number: WhatsAppNumber; lease: SessionLease; messages: Message[]; notifier: DeliveryNotifier }> {
      const number = await seedNumberRow(suite.store);
      const lease = await holdLease(suite.store, number.id);
      const at = new Date();
      await insertWebhook(
        suite.store.db,
        {
          id: newId('webhook'),
          accountId: number.accountId,
          url: 'https://hooks.example/status',
          eventTypes: ['message.status'],
          messageScope: 'direct',
          description: null,
          rabbitmq: null,
          chatwoot: null,
          enabled: true,
          disabledReason: null,
          failingSince: null,
          createdAt: at,
          updatedAt: at,
        },
        'sealed',
      );
      const messages: Message[] = [];
      for (let index = 0; index < count; index++) {
        const message: Message = {
          id: newId('message'),
          accountId: number.accountId,
          numberId: number.id,
          direction: 'outbound',
          fromPhone: number.phone,
          fromLid: null,
          toPhone: '+14155550100' as E164,
          text: `send ${index}`,
          contentKind: 'text',
          mediaId: null,
          structured: null,
          status: 'queued',
          engineMessageId: null,
          createdAt: at,
        };
        await insertMessage(suite.store.db, message);
        messages.push(message);
      }
      const notifier: DeliveryNotifier = { claimForNew: () => null, deliveriesQueued: () => undefined, lookups: suite.store.lookups };
      // The account's webhooks come from memory, as on a gateway that has served it before.
      await suite.store.lookups.enabledWebhooks(suite.store.db, number.accountId);
      return { number, lease, messages, notifier };
    }

    /** Every message's `sent` record in one batch of `committer`; the outcomes once it committed. */
    function recordSent(
      committer: GroupCommitter,
      lease: SessionLease,
      messages: Message[],
      notifier: DeliveryNotifier,
    ): Promise<BatchOutcome<Enqueued>>[] {
      const at = new Date();
      return messages.map((message, index) =>
        committer.run(async (_trx, batch) =>
          queueSentRecord(
            batch,
            lease,
            { id: message.id, engineMessageId: `ENGINE-${index}-${message.id}`, at: at.getTime(), onlyIfPending: false },
            (trx, end) => queueEvent(trx, end, notifier, message.accountId, messageStatusPayload(message, 'sent', null, at), at),
          ),
        ),
      );
    }

    function receipts(
      committer: GroupCommitter,
      lease: SessionLease,
      messages: Message[],
      notifier: DeliveryNotifier,
      status: 'delivered' | 'read',
    ): Promise<BatchOutcome<Enqueued>>[] {
      const at = new Date();
      const allowedFrom = status === 'delivered' ? (['sent', 'unknown'] as const) : (['sent', 'delivered', 'unknown'] as const);
      return messages.map((message) =>
        committer.run(async (_trx, batch) =>
          queueStatusAdvance(batch, lease, status, allowedFrom, { id: message.id, at: at.getTime(), errorCode: null }, (trx, end) =>
            queueEvent(trx, end, notifier, message.accountId, messageStatusPayload(message, status, null, at), at),
          ),
        ),
      );
    }

    async function statusesOf(messages: Message[]): Promise<string[]> {
      const rows = await suite.store.db
        .selectFrom('messages')
        .select(['id', 'status'])
        .where(
          'id',
          'in',
          messages.map((message) => message.id),
        )
        .execute();
      const byId = new Map(rows.map((row) => [row.id, row.status]));
      return messages.map((message) => byId.get(message.id) ?? 'missing');
    }

    async function eventsOf(accountId: string): Promise<{ events: number; deliveries: number }> {
      const events = await suite.store.db
        .selectFrom('webhook_events')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      const deliveries = await suite.store.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      return { events: Number(events.count), deliveries: Number(deliveries.count) };
    }

    for (const sends of [1, 20]) {
      it(`a batch of ${sends} sent record(s) and then of their receipts takes ${STATEMENTS_PER_BATCH[dialect]} statements each`, async () => {
        const { number, lease, messages, notifier } = await seed(sends);
        const { db, statements } = countingStatements(suite.store.db);
        const committer = new GroupCommitter(db, 100);

        const sent = await Promise.all(recordSent(committer, lease, messages, notifier));
        assert.equal(statements(), STATEMENTS_PER_BATCH[dialect], 'the sent records: the fence, one update, the events');
        assert.deepEqual(
          sent.map((outcome) => outcome.value?.count),
          messages.map(() => 1),
          'each record queued its one delivery',
        );
        assert.deepEqual(
          await statusesOf(messages),
          messages.map(() => 'sent'),
        );
        assert.deepEqual(await eventsOf(number.accountId), { events: sends, deliveries: sends });

        const delivered = await Promise.all(receipts(committer, lease, messages, notifier, 'delivered'));
        assert.equal(statements(), 2 * STATEMENTS_PER_BATCH[dialect], 'the receipts: the fence, one update, the events');
        assert.ok(delivered.every((outcome) => outcome.value?.count === 1));
        assert.deepEqual(
          await statusesOf(messages),
          messages.map(() => 'delivered'),
        );
        assert.deepEqual(await eventsOf(number.accountId), { events: 2 * sends, deliveries: 2 * sends });
      });
    }

    it('a receipt that would move a row back does not, and reports nothing, beside one that moves its row', async () => {
      const { number, lease, messages, notifier } = await seed(2);
      const committer = new GroupCommitter(suite.store.db, 100);
      await Promise.all(recordSent(committer, lease, messages, notifier));
      await Promise.all(receipts(committer, lease, [messages[0]!], notifier, 'read'));
      const delivered = await Promise.all(receipts(committer, lease, messages, notifier, 'delivered'));
      assert.deepEqual(
        delivered.map((outcome) => outcome.value?.count),
        [undefined, 1],
      );
      assert.deepEqual(await statusesOf(messages), ['read', 'delivered']);
      assert.deepEqual(await eventsOf(number.accountId), { events: 4, deliveries: 4 });
    });

    it("a lease lost in a batch refuses that number's records, and only those: nothing of them is written", async () => {
      const held = await seed(3);
      const lost = await seed(3);
      // Another node took the second number over: its lease moved to the next epoch.
      await holdLease(suite.store, lost.number.id, lost.lease.epoch + 1);
      const committer = new GroupCommitter(suite.store.db, 100);
      const outcomes = await Promise.allSettled([
        ...recordSent(committer, held.lease, held.messages, held.notifier),
        ...recordSent(committer, lost.lease, lost.messages, lost.notifier),
      ]);
      for (const outcome of outcomes.slice(0, 3)) assert.equal(outcome.status, 'fulfilled');
      for (const outcome of outcomes.slice(3)) {
        assert.equal(outcome.status, 'rejected');
        assert.ok((outcome as PromiseRejectedResult).reason instanceof StaleLeaseError);
      }
      assert.deepEqual(await statusesOf(held.messages), ['sent', 'sent', 'sent']);
      assert.deepEqual(await statusesOf(lost.messages), ['queued', 'queued', 'queued']);
      assert.deepEqual(await eventsOf(lost.number.accountId), { events: 0, deliveries: 0 });
      assert.deepEqual(await eventsOf(held.number.accountId), { events: 3, deliveries: 3 });
    });

    it('a record only over a pending row leaves a row that moved on as it is, and reports nothing', async () => {
      const { number, lease, messages, notifier } = await seed(2);
      const committer = new GroupCommitter(suite.store.db, 100);
      await Promise.all(recordSent(committer, lease, [messages[0]!], notifier));
      await Promise.all(receipts(committer, lease, [messages[0]!], notifier, 'delivered'));
      const at = new Date();
      const again = await Promise.all(
        messages.map((message) =>
          committer.run(async (_trx, batch) =>
            queueSentRecord(
              batch,
              lease,
              { id: message.id, engineMessageId: `RETRY-${message.id}`, at: at.getTime(), onlyIfPending: true },
              (trx, end) => queueEvent(trx, end, notifier, message.accountId, messageStatusPayload(message, 'sent', null, at), at),
            ),
          ),
        ),
      );
      assert.deepEqual(
        again.map((outcome) => outcome.value?.count),
        [undefined, 1],
      );
      assert.deepEqual(await statusesOf(messages), ['delivered', 'sent']);
      assert.deepEqual(await eventsOf(number.accountId), { events: 3, deliveries: 3 });
    });
  });
}
