import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { E164 } from '../../../../src/domain/phone.ts';
import { newId } from '../../../../src/domain/ids.ts';
import { operatorScope } from '../../../../src/domain/tenant-scope.ts';
import { insertNumber } from '../../../../src/store/repositories/numbers.ts';
import { listMessages } from '../../../../src/store/repositories/message-pages.ts';
import { holdLease } from '../../../support/leases.ts';
import { dialects } from '../../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../../support/gateway.ts';

// A number added by another process (the CLI) connects on the serving node's next lease tick.
// A message sent to it before then must wait for it on the simulated network, as WhatsApp keeps
// messages for a registered phone, and not be taken by an outside handset and lost.
for (const dialect of dialects) {
  describe(`a sandbox number added elsewhere, before its session connects (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test?.close());

    it('receives what was sent to it meanwhile, once it connects', async () => {
      const sender = await seedAccount(test.gateway);
      const phone = uniquePhone() as E164;
      const at = new Date();
      // Written as the CLI writes it, without telling this node's supervisor.
      await insertNumber(test.gateway.store.db, {
        id: newId('number'),
        accountId: sender.accountId,
        holderUserId: null,
        phone,
        engine: 'sandbox',
        status: 'connected',
        statusReason: null,
        autoRead: false,
        rejectCalls: false,
        callReplyText: null,
        showOnline: false,
        createdAt: at,
        updatedAt: at,
      });
      // A stand-in node holds the number, so that this node's lease keeper cannot start its session
      // before the message is sent (under load a renewal tick could come first).
      const number0 = await test.gateway.numbers.findNumber(operatorScope(), phone);
      await holdLease(test.gateway.store, number0.id);
      const sent = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: phone, message: 'before you connected' },
        sender.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      const number = await test.gateway.numbers.findNumber(operatorScope(), phone);
      assert.equal(test.gateway.supervisor.sessionStatus(number), 'disconnected', 'the new number has no session yet');
      assert.equal(
        (
          await test.gateway.store.db
            .selectFrom('messages')
            .select('status')
            .where('id', '=', sent.json().message_id)
            .executeTakeFirstOrThrow()
        ).status,
        'sent',
        'not delivered to anyone yet',
      );

      await test.gateway.store.db.deleteFrom('number_leases').where('number_id', '=', number.id).execute();
      await test.gateway.keeper.tickSoon();
      for (let tries = 0; tries < 300; tries++) {
        const received = await listMessages(test.gateway.store.db, {
          accountId: sender.accountId,
          numberId: number.id,
          direction: 'inbound',
          limit: 5,
        });
        if (received.length > 0) {
          assert.deepEqual(
            received.map((message) => message.text),
            ['before you connected'],
          );
          return;
        }
        await delay(20);
      }
      assert.fail('the message never reached the number once it connected');
    });
  });
}
