import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { findMessageById, insertMessage } from '../../../src/store/repositories/messages.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { startDeliveringGateway, subscribeFresh, verifiedPayload, webhookEnv, onPath } from '../../support/delivery-support.ts';

const LID = '123456789012345@lid';

// The engine boundary is where WhatsApp's addressing arrives, so these tests speak to the
// gateway's engine events directly, as the Baileys engine does.
for (const dialect of dialects) {
  describe(`LID-addressed senders and failed receipts (${dialect})`, () => {
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

    it('a sender whose phone could not be resolved is stored and delivered with from_phone null and from_lid set', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(account.accountId, ['message']);
      const receivedAt = new Date();
      const message = await test.gateway.receiver.receive({
        toPhone: account.phones[0] as E164,
        fromPhone: null,
        fromLid: LID,
        text: 'a photo caption',
        contentKind: 'image_caption',
        engineMessageId: `engine-${newId('message')}`,
        receivedAt,
      });

      const stored = await findMessageById(test.gateway.store.db, message.id);
      assert.equal(stored?.fromPhone, null);
      assert.equal(stored?.fromLid, LID);
      assert.equal(stored?.contentKind, 'image_caption');

      const [request] = await receiver.waitForRequests(1, onPath(path));
      const createdAt = receivedAt.toISOString();
      assert.deepEqual(verifiedPayload(request!, secret), {
        event: 'message',
        webhook_id: webhook.id,
        message_id: message.id,
        created_at: createdAt,
        from_phone: null,
        from_lid: LID,
        to_phone: account.phones[0],
        group: null,
        message: 'a photo caption',
        content_kind: 'image_caption',
        reply_to: null,
        status: 'received',
        // The nested shape's `from` is never null: it falls back to the LID.
        data: { from: LID, message: 'a photo caption', timestamp: createdAt },
      });
    });

    it('a LID-addressed sender whose phone was resolved carries both, the phone first', async () => {
      const account = await seedAccount(test.gateway);
      const { secret, path } = await subscribe(account.accountId, ['message']);
      const from = uniquePhone();
      await test.gateway.receiver.receive({
        toPhone: account.phones[0] as E164,
        fromPhone: from as E164,
        fromLid: LID,
        text: 'resolved',
        contentKind: 'text',
        engineMessageId: `engine-${newId('message')}`,
        receivedAt: new Date(),
      });
      const [request] = await receiver.waitForRequests(1, onPath(path));
      const payload = verifiedPayload(request!, secret);
      assert.equal(payload.from_phone, from);
      assert.equal(payload.from_lid, LID);
      assert.deepEqual((payload.data as Record<string, unknown>).from, from);
    });

    it('a phone-addressed sender has from_lid null', async () => {
      const account = await seedAccount(test.gateway);
      const { secret, path } = await subscribe(account.accountId, ['message']);
      const from = uniquePhone();
      const response = await test.post(
        '/sandbox/receive',
        { from_phone: from, to_phone: account.phones[0], message: 'by phone' },
        account.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().from_lid, null);
      const [request] = await receiver.waitForRequests(1, onPath(path));
      const payload = verifiedPayload(request!, secret);
      assert.equal(payload.from_phone, from);
      assert.equal(payload.from_lid, null);
      assert.equal(payload.content_kind, 'text');
    });

    it('an engine refuses to store a message with neither a sender phone nor a LID', async () => {
      const account = await seedAccount(test.gateway);
      await assert.rejects(
        test.gateway.receiver.receive({
          toPhone: account.phones[0] as E164,
          fromPhone: null,
          fromLid: null,
          text: 'from nobody',
          contentKind: 'text',
          engineMessageId: `engine-${newId('message')}`,
          receivedAt: new Date(),
        }),
        /neither a sender phone nor a LID/,
      );
    });

    it('a failed receipt with a code stores it on the message and carries it in message.status', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, secret, path } = await subscribe(account.accountId, ['message.status']);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      // A sent message written directly: a sandbox send would race its own delivered receipt.
      const engineMessageId = `engine-${newId('message')}`;
      const messageId = newId('message');
      await insertMessage(test.gateway.store.db, {
        id: messageId,
        accountId: account.accountId,
        numberId: number.id,
        direction: 'outbound',
        fromPhone: number.phone,
        fromLid: null,
        toPhone: '+14155550100' as E164,
        text: 'restricted',
        contentKind: 'text',
        mediaId: null,
        structured: null,
        status: 'sent',
        engineMessageId,
        createdAt: new Date(),
      });
      const at = new Date();
      await test.gateway.receiver.recordReceipt({
        lease: test.gateway.keeper.leaseOf(number.id)!,
        phone: number.phone,
        engineMessageId,
        status: 'failed',
        errorCode: '463',
        at,
      });

      const row = await test.gateway.store.db
        .selectFrom('messages')
        .select(['status', 'error_code'])
        .where('id', '=', messageId)
        .executeTakeFirst();
      assert.deepEqual(row, { status: 'failed', error_code: '463' });
      const [request] = await receiver.waitForRequests(1, onPath(path));
      assert.deepEqual(verifiedPayload(request!, secret), {
        event: 'message.status',
        webhook_id: webhook.id,
        message_id: messageId,
        from_phone: number.phone,
        to_phone: '+14155550100',
        group: null,
        status: 'failed',
        error_code: '463',
        timestamp: at.toISOString(),
      });
    });
  });
}
