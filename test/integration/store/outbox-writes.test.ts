import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../../src/domain/ids.ts';
import type { Message, WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import type { Webhook, WebhookEventType } from '../../../src/domain/webhooks.ts';
import { incomingMessagePayload, messageStatusPayload } from '../../../src/domain/event-payloads.ts';
import { runsOnPostgres } from '../../../src/store/compiled-statement.ts';
import { findMessageById } from '../../../src/store/repositories/messages.ts';
import { insertWebhook } from '../../../src/store/repositories/webhooks.ts';
import { CLAIMS_ONLY, enqueueEvent, insertMessageAndEnqueue, type DeliveryNotifier } from '../../../src/webhooks/outbox.ts';
import { dialects, NO_TIMES, seedNumberRow, suiteStore } from '../../support/databases.ts';

// An incoming message and its event are written in one statement on PostgreSQL and in several
// on SQLite; either way the rows must be the same, and all or nothing.

/** A worker that leases deliveries to one webhook for sending from memory. */
function leasingFor(webhookId: string, claimedUntil: number): DeliveryNotifier {
  return { claimForNew: (id) => (id === webhookId ? claimedUntil : null), deliveriesQueued: () => undefined };
}
for (const dialect of dialects) {
  describe(`a message and its webhook event are written together (${dialect})`, () => {
    const suite = suiteStore(dialect);

    async function accountWithWebhooks(
      eventTypesPerWebhook: WebhookEventType[][],
    ): Promise<{ number: WhatsAppNumber; webhooks: Webhook[] }> {
      const number = await seedNumberRow(suite.store, {}, 'pro');
      const { accountId } = number;
      const at = new Date();
      const webhooks: Webhook[] = [];
      for (const eventTypes of eventTypesPerWebhook) {
        const webhook: Webhook = {
          id: newId('webhook'),
          accountId,
          url: 'https://receiver.example/hook',
          eventTypes,
          messageScope: 'direct',
          description: null,
          rabbitmq: null,
          chatwoot: null,
          enabled: true,
          disabledReason: null,
          failingSince: null,
          createdAt: at,
          updatedAt: at,
        };
        await insertWebhook(suite.store.db, webhook, 'sealed-secret');
        webhooks.push(webhook);
      }
      return { number, webhooks };
    }

    function incoming(number: WhatsAppNumber): Message {
      return {
        id: newId('message'),
        accountId: number.accountId,
        numberId: number.id,
        direction: 'inbound',
        fromPhone: '+447700900999' as E164,
        fromLid: null,
        toPhone: number.phone,
        text: 'hello',
        contentKind: 'text',
        mediaId: null,
        structured: null,
        status: 'received',
        engineMessageId: `sbx_${newId('event')}`,
        createdAt: new Date(),
        times: { ...NO_TIMES },
      };
    }

    async function queued(accountId: string) {
      const { rows } = await sql<{
        id: string;
        webhook_id: string;
        event_type: string;
        payload: string;
        state: string;
        next_attempt_at: number;
        created_at: number;
        claimed_until: number | null;
      }>`
        select d.id, d.webhook_id, e.event_type, e.payload, d.state, d.next_attempt_at, e.created_at, d.claimed_until
        from webhook_deliveries d join webhook_events e on e.id = d.event_id where d.account_id = ${accountId} order by d.webhook_id`.execute(
        suite.store.db,
      );
      return rows;
    }

    it('the dialect is told apart, so PostgreSQL takes the one-statement path and SQLite the other', () => {
      assert.equal(runsOnPostgres(suite.store.db), dialect === 'postgres');
    });

    it('with one subscribed webhook: the message, one event and one pending delivery, due at once', async () => {
      const { number, webhooks } = await accountWithWebhooks([['message'], ['message.status']]);
      const message = incoming(number);
      const payload = incomingMessagePayload(message);
      const enqueued = await suite.store.db.transaction().execute((trx) => insertMessageAndEnqueue(trx, CLAIMS_ONLY, message, payload));
      assert.deepEqual(enqueued, { count: 1, handedOver: [] });
      assert.deepEqual(await findMessageById(suite.store.db, message.id), message);
      const rows = await queued(number.accountId);
      assert.equal(rows.length, 1, 'only the webhook subscribed to message');
      assert.equal(rows[0]!.webhook_id, webhooks[0]!.id);
      assert.equal(rows[0]!.event_type, 'message');
      assert.deepEqual(JSON.parse(rows[0]!.payload), JSON.parse(JSON.stringify(payload)));
      assert.equal(rows[0]!.state, 'pending');
      assert.equal(Number(rows[0]!.next_attempt_at), message.createdAt.getTime());
      assert.equal(Number(rows[0]!.created_at), message.createdAt.getTime());
      assert.equal(rows[0]!.claimed_until, null, 'left to a claim');
    });

    it('a delivery the worker takes for itself is written with its lease, and handed over whole', async () => {
      const { number, webhooks } = await accountWithWebhooks([['message'], ['message']]);
      const claimedUntil = Date.now() + 20_000;
      const message = incoming(number);
      const payload = incomingMessagePayload(message);
      const enqueued = await suite.store.db
        .transaction()
        .execute((trx) => insertMessageAndEnqueue(trx, leasingFor(webhooks[1]!.id, claimedUntil), message, payload));
      assert.equal(enqueued.count, 2);
      const rows = await queued(number.accountId);
      const leasedRow = rows.find((row) => row.webhook_id === webhooks[1]!.id)!;
      assert.equal(Number(leasedRow.claimed_until), claimedUntil);
      assert.equal(rows.find((row) => row.webhook_id === webhooks[0]!.id)!.claimed_until, null);
      assert.equal(enqueued.handedOver.length, 1);
      const [handed] = enqueued.handedOver;
      assert.equal(handed!.id, leasedRow.id);
      assert.equal(handed!.claimedUntil, claimedUntil);
      assert.equal(handed!.url, 'https://receiver.example/hook');
      assert.equal(handed!.sealedSecret, 'sealed-secret');
      assert.equal(handed!.payload, leasedRow.payload);
      assert.deepEqual(handed!.event, payload);
      // The one-statement form too (PostgreSQL): one subscribed webhook, leased.
      const single = await accountWithWebhooks([['message']]);
      const alone = incoming(single.number);
      const one = await suite.store.db
        .transaction()
        .execute((trx) =>
          insertMessageAndEnqueue(trx, leasingFor(single.webhooks[0]!.id, claimedUntil), alone, incomingMessagePayload(alone)),
        );
      assert.equal(one.handedOver[0]!.id, (await queued(single.number.accountId))[0]!.id);
      assert.equal(Number((await queued(single.number.accountId))[0]!.claimed_until), claimedUntil);
    });

    it('with two subscribed webhooks, two deliveries of one event; with none, the message alone', async () => {
      const two = await accountWithWebhooks([['message'], ['message', 'message.status']]);
      assert.equal(
        (await insertMessageAndEnqueue(suite.store.db, CLAIMS_ONLY, incoming(two.number), incomingMessagePayload(incoming(two.number))))
          .count,
        2,
      );
      assert.deepEqual(
        (await queued(two.number.accountId)).map((row) => row.webhook_id),
        two.webhooks.map((webhook) => webhook.id).sort(),
      );
      const none = await accountWithWebhooks([['message.status']]);
      const alone = incoming(none.number);
      assert.equal((await insertMessageAndEnqueue(suite.store.db, CLAIMS_ONLY, alone, incomingMessagePayload(alone))).count, 0);
      assert.ok(await findMessageById(suite.store.db, alone.id), 'the message is stored without subscribers');
      assert.deepEqual(await queued(none.number.accountId), []);
    });

    it('a status event alone takes the same path and writes the same rows', async () => {
      const { number, webhooks } = await accountWithWebhooks([['message.status']]);
      const message = incoming(number);
      const at = new Date();
      assert.equal(
        (await enqueueEvent(suite.store.db, CLAIMS_ONLY, number.accountId, messageStatusPayload(message, 'delivered', null, at), at)).count,
        1,
      );
      const rows = await queued(number.accountId);
      assert.deepEqual(
        rows.map((row) => [row.webhook_id, row.event_type]),
        [[webhooks[0]!.id, 'message.status']],
      );
    });

    it('all or nothing: when a write fails, neither the message nor its event stays', async () => {
      const { number } = await accountWithWebhooks([['message']]);
      const first = incoming(number);
      await insertMessageAndEnqueue(suite.store.db, CLAIMS_ONLY, first, incomingMessagePayload(first));
      // The same message id again: its insert fails, and the transaction takes the event with it.
      const again = { ...first, text: 'again' };
      await assert.rejects(
        suite.store.db.transaction().execute((trx) => insertMessageAndEnqueue(trx, CLAIMS_ONLY, again, incomingMessagePayload(again))),
      );
      assert.equal((await findMessageById(suite.store.db, first.id))?.text, 'hello');
      assert.equal((await queued(number.accountId)).length, 1, 'no second event or delivery');
    });
  });
}
