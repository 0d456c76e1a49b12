import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { insertMessage } from '../../../src/store/repositories/messages.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { startDeliveringGateway, subscribeFresh, verifiedPayload, webhookEnv } from '../../support/delivery-support.ts';

// A read receipt reads the chat up to its message, as WhatsApp means it: our earlier messages to
// that person, still sent or delivered, are read too, each reported with the receipt's time.
for (const dialect of dialects) {
  describe(`a read receipt settles the earlier messages of its chat (${dialect})`, () => {
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

    it('marks earlier sent and delivered messages to the same phone read, and reports each; others are left alone', async () => {
      const account = await seedAccount(test.gateway);
      const { secret, path } = await subscribeFresh(test, receiver, account.accountId, ['message.status']);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      const CUSTOMER = '+14155550100' as E164;
      const started = Date.now() - 60_000;
      // Written directly, so that no sandbox receipt races the ones under test.
      const write = async (status: 'sent' | 'delivered' | 'read' | 'failed', toPhone: E164, secondsIn: number) => {
        const id = newId('message');
        await insertMessage(test.gateway.store.db, {
          id,
          accountId: account.accountId,
          numberId: number.id,
          direction: 'outbound',
          fromPhone: number.phone,
          fromLid: null,
          toPhone,
          text: `${status} at ${secondsIn}`,
          contentKind: 'text',
          mediaId: null,
          structured: null,
          status,
          engineMessageId: `ENGINE-${id}`,
          createdAt: new Date(started + secondsIn * 1000),
        });
        return id;
      };
      const oldSent = await write('sent', CUSTOMER, 1);
      const oldDelivered = await write('delivered', CUSTOMER, 2);
      const failed = await write('failed', CUSTOMER, 3);
      const elsewhere = await write('delivered', '+14155550199' as E164, 4);
      const readOne = await write('delivered', CUSTOMER, 5);
      const later = await write('delivered', CUSTOMER, 6);

      const at = new Date();
      await test.gateway.receiver.recordReceipt({
        lease: test.gateway.keeper.leaseOf(number.id)!,
        phone: number.phone,
        engineMessageId: `ENGINE-${readOne}`,
        status: 'read',
        errorCode: null,
        at,
      });

      const statuses = Object.fromEntries(
        (
          await test.gateway.store.db.selectFrom('messages').select(['id', 'status']).where('account_id', '=', account.accountId).execute()
        ).map((row) => [row.id, row.status]),
      );
      assert.deepEqual(
        [statuses[oldSent], statuses[oldDelivered], statuses[failed], statuses[elsewhere], statuses[readOne], statuses[later]],
        ['read', 'read', 'failed', 'delivered', 'read', 'delivered'],
      );
      const requests = await receiver.waitForRequests(3, (request: ReceivedRequest) => request.path === path);
      const reported = requests
        .map((request) => verifiedPayload(request, secret))
        .map((payload) => [payload.message_id, payload.status, payload.timestamp]);
      assert.deepEqual(
        reported.sort(),
        [
          [oldSent, 'read', at.toISOString()],
          [oldDelivered, 'read', at.toISOString()],
          [readOne, 'read', at.toISOString()],
        ].sort(),
      );
    });
  });
}
