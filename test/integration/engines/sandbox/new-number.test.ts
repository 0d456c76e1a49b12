import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { E164 } from '../../../../src/domain/phone.ts';
import { operatorScope } from '../../../../src/domain/tenant-scope.ts';
import { listMessages } from '../../../../src/store/repositories/message-pages.ts';
import type { Store } from '../../../../src/store/database.ts';
import { holdLease } from '../../../support/leases.ts';
import { dialects, seedNumberRow } from '../../../support/databases.ts';
import { RECIPIENT_AWAY, seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../../support/gateway.ts';

// A number added by another process (the CLI) connects on the serving node's next lease tick.
// A message sent to it before then must wait for it on the simulated network, as WhatsApp keeps
// messages for a registered phone, and not be taken by an outside handset and lost.
for (const dialect of dialects) {
  describe(`a sandbox number added elsewhere, before its session connects (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      // The first test's message waits for a number with no session: the network answers its sender
      // after its own wait, not the tests' minute.
      test = await startTestGateway(dialect, {}, RECIPIENT_AWAY);
    });
    after(() => test?.close());

    it('receives what was sent to it meanwhile, once it connects', async () => {
      const sender = await seedAccount(test.gateway);
      // Written as the CLI writes it, without telling this node's supervisor, and held by a stand-in
      // node in the same transaction, so that this node's lease keeper cannot start its session before
      // the message is sent: written one after the other, a tick under load took the number between them.
      const { phone } = await test.gateway.store.db.transaction().execute(async (trx) => {
        const inTransaction = { ...test.gateway.store, db: trx } as Store;
        const row = await seedNumberRow(inTransaction, { accountId: sender.accountId, phone: uniquePhone() as E164 });
        await holdLease(inTransaction, row.id);
        return row;
      });
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

    it('answers messages for numbers and sends from them that come while this node takes them on, once their sessions start', async () => {
      const account = await seedAccount(test.gateway);
      // Several numbers gained in one tick start one after another, so the last ones wait longest.
      const numbers = [];
      for (let index = 0; index < 6; index++) {
        const { phone } = await seedNumberRow(test.gateway.store, { accountId: account.accountId, phone: uniquePhone() as E164 });
        const number = await test.gateway.numbers.findNumber(operatorScope(), phone);
        await holdLease(test.gateway.store, number.id);
        numbers.push(number);
      }
      const ids = numbers.map((number) => number.id);
      await test.gateway.store.db.deleteFrom('number_leases').where('number_id', 'in', ids).execute();
      // The tick gains the leases and queues the sessions' starts; the requests come before they end.
      await test.gateway.keeper.tickSoon();
      assert.ok(
        numbers.every((number) => test.gateway.keeper.leaseOf(number.id) !== undefined),
        'this node holds the numbers now',
      );
      const startedBefore = numbers.map((number) => test.gateway.supervisor.sessionStatus(number));
      const answers = await Promise.all(
        numbers.flatMap((number) => [
          test.post('/sandbox/receive', { from_phone: '+14155550100', to_phone: number.phone, message: 'as you came up' }, account.apiKey),
          test.post('/send_message', { from_phone: number.phone, to_phone: '+14155550100', message: 'first words' }, account.apiKey),
        ]),
      );
      assert.ok(
        startedBefore.includes('disconnected'),
        `some sessions had not started when the requests came: ${startedBefore.join(', ')}`,
      );
      for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
      assert.deepEqual(
        answers.map((answer) => answer.json().message),
        numbers.flatMap(() => ['as you came up', 'first words']),
      );
    });
  });
}
