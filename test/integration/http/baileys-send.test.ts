import { operatorScope } from '../../../src/domain/tenant-scope.ts';
/**
 * The public send API over the real Baileys engine: the HTTP stack, the services, the database
 * and the engine are real; only WhatsApp's servers are fake sockets (fake-whatsapp.ts).
 */
import assert from 'node:assert/strict';
import { resumeAsLinked } from '../../support/baileys-number.ts';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Boom } from '@hapi/boom';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { findMessageById } from '../../../src/store/repositories/messages.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { RecordingSocketFactory, type FakeSocket } from '../../support/fake-whatsapp.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';

const PASSWORD = 'correct horse battery';

for (const dialect of dialects) {
  describe(`sending through a linked Baileys number (${dialect})`, () => {
    let test: TestGateway;
    let apiKey: string;
    let accountId: string;
    const whatsapp = new RecordingSocketFactory();

    before(async () => {
      test = await startTestGateway(dialect, {}, { baileysSocketFactory: whatsapp.create });
      accountId = (await test.gateway.accounts.createAccount({ name: 'Real numbers', plan: 'enterprise' })).id;
      apiKey = (await test.gateway.apiKeys.createKey({ accountId })).plaintext;
    });
    after(async () => {
      await test.gateway.supervisor.stopAll();
      await test.close();
    });

    const waitForStatus = async (number: WhatsAppNumber, status: string) => {
      for (let tries = 0; tries < 300; tries++) {
        if ((await test.gateway.numbers.findNumber(operatorScope(), number.id)).status === status) return;
        await delay(10);
      }
      assert.fail(`${number.phone} never reached ${status}`);
    };

    /** A number whose creds are in the database, as after a scan, and whose session is open. */
    const connectedNumber = async (ofAccount = accountId): Promise<{ number: WhatsAppNumber; socket: FakeSocket }> => {
      const number = await test.gateway.numbers.addNumber(operatorScope(), {
        accountId: ofAccount,
        phone: uniquePhone(),
        engine: 'baileys',
      });
      await resumeAsLinked(test, number);
      // This number's own socket: a session of the file's other numbers may reconnect meanwhile.
      const own = whatsapp.options.flatMap((options, index) =>
        options.auth.creds.me?.id.startsWith(`${number.phone.slice(1)}:`) ? [whatsapp.sockets[index]!] : [],
      );
      assert.equal(own.length, 1, 'the linked number got a socket');
      const socket = own[0]!;
      socket.openAs(number.phone.slice(1));
      await waitForStatus(number, 'connected');
      return { number, socket };
    };
    const send = (from: WhatsAppNumber, to: string, message = 'Hello from a real number') =>
      test.post('/send_message', { from_phone: from.phone, to_phone: to, message }, apiKey);

    it('answers 200 once Baileys has taken the text, and stores WhatsApp’s message id', async () => {
      const { number, socket } = await connectedNumber();
      const response = await send(number, '+14155550100');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().status, 'sent');
      assert.deepEqual(
        socket.sendCalls.map((call) => [call.jid, call.content]),
        [['14155550100@s.whatsapp.net', { text: 'Hello from a real number' }]],
      );
      const stored = await findMessageById(test.gateway.store.db, response.json().message_id);
      assert.equal(stored?.engineMessageId, '3EB0OUT1');
    });

    it('a template or an interactive message, which a phone cannot send, is refused at once, for later too: nothing is stored, queued or sent', async () => {
      const { number, socket } = await connectedNumber();
      const storedCount = async () =>
        (await test.gateway.store.db.selectFrom('messages').select('id').where('account_id', '=', accountId).execute()).length;
      const before = await storedCount();
      const contents = [
        { template: { name: 'order_ready', language: 'en_US' } },
        // Declined before the header's file is fetched: the address answers nothing.
        { template: { name: 'order_shipped', language: 'en_US', header_media: { url: 'http://127.0.0.1:9/never-fetched.png' } } },
        { interactive: { body: 'Pick one', buttons: [{ id: 'yes', title: 'Yes' }] } },
      ];
      for (const content of contents)
        for (const schedule of [{}, { send_at: new Date(Date.now() + 3_600_000).toISOString() }]) {
          const response = await test.post(
            '/send_message',
            { from_phone: number.phone, to_phone: '+14155550100', ...content, ...schedule },
            apiKey,
          );
          assert.deepEqual(
            [response.statusCode, response.json().error, response.json().meta.engine],
            [422, 'capability_not_supported', 'baileys'],
            JSON.stringify({ content, schedule }),
          );
        }
      assert.equal(await storedCount(), before, 'no message was stored');
      assert.deepEqual(socket.sendCalls, [], 'nothing reached WhatsApp');
    });

    it('refuses a recipient who is not on WhatsApp with 400 recipient_not_on_whatsapp, and sends nothing', async () => {
      const { number, socket } = await connectedNumber();
      socket.answerOnWhatsApp = async (phones) => phones.map((phone) => ({ jid: `${phone}@s.whatsapp.net`, exists: false }));
      const response = await send(number, '+14155550101');
      assert.equal(response.statusCode, 400, response.body);
      assert.deepEqual(response.json(), {
        error: 'recipient_not_on_whatsapp',
        message: '+14155550101 does not use WhatsApp, so the message cannot be delivered.',
        details: 'to_phone',
        request_id: response.headers['x-request-id'],
        meta: { field: 'to_phone' },
      });
      assert.equal(socket.sendCalls.length, 0);
    });

    it('another account’s send does not show in this account’s check: it is asked afresh and not marked cached', async () => {
      const neighbourId = (await test.gateway.accounts.createAccount({ name: 'Neighbour', plan: 'enterprise' })).id;
      const neighbourKey = (await test.gateway.apiKeys.createKey({ accountId: neighbourId })).plaintext;
      const neighbour = await connectedNumber(neighbourId);
      const ours = await connectedNumber();
      const recipient = '+14155550105';
      const neighbourSend = await test.post(
        '/send_message',
        { from_phone: neighbour.number.phone, to_phone: recipient, message: 'hi' },
        neighbourKey,
      );
      assert.equal(neighbourSend.statusCode, 200, neighbourSend.body);
      assert.deepEqual(neighbour.socket.onWhatsAppCalls, [[recipient.slice(1)]], 'the neighbour’s send looked the recipient up');

      const check = () => test.post('/check_numbers', { from_phone: ours.number.phone, phones: [recipient] }, apiKey);
      const first = await check();
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().results[0].cached, false, 'nothing of the neighbour’s send shows');
      assert.deepEqual(ours.socket.onWhatsAppCalls, [[recipient.slice(1)]], 'our number asked WhatsApp itself');
      assert.equal((await check()).json().results[0].cached, true, 'our own check is remembered');
      assert.equal((await send(ours.number, recipient)).statusCode, 200);
      assert.equal(ours.socket.onWhatsAppCalls.length, 1, 'and it warms our own send');
    });

    it('answers 503 number_not_connected, with the status, while the session is down', async () => {
      const { number, socket } = await connectedNumber();
      socket.closeWith(500);
      await waitForStatus(number, 'disconnected');
      const response = await send(number, '+14155550102');
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.json().error, 'number_not_connected');
      assert.equal(response.json().meta.status, 'disconnected');
    });

    it('stops at 463: the number is paused (not failed), nothing is retried, and the API says so', async () => {
      const { number, socket } = await connectedNumber();
      socket.answerSend = async () => {
        throw new Boom('restricted', { statusCode: 463 });
      };
      const response = await send(number, '+14155550103');
      assert.equal(response.statusCode, 503, response.body);
      assert.deepEqual([response.json().error, response.json().meta.reason], ['number_paused', 'restricted']);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).status, 'connected');
      assert.equal(socket.sendCalls.length, 1, 'sent once, never retried');
    });

    it('lets an operator restart a session that was replaced, and refuses to restart a healthy one', async () => {
      const { number, socket } = await connectedNumber();
      await createTestUser(test.gateway, {
        email: `op-${number.id}@restart.test`,
        accountId: null,
        password: PASSWORD,
        isOperator: true,
        role: 'admin',
      });
      const operator = new DashboardClient(test);
      assert.equal((await operator.signIn(`op-${number.id}@restart.test`, PASSWORD)).statusCode, 303);
      const page = `/operator/numbers/${number.id}`;

      assert.doesNotMatch((await operator.get(page)).body, /Restart session/, 'nothing to restart while connected');
      const refused = await operator.submit(page, `${page}/restart`, {});
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /only a failed, conflicting or disconnected session is restarted/);

      // Counted for this number only: sessions of the file's other numbers may reconnect meanwhile.
      const socketsOfNumber = () =>
        whatsapp.options.filter((options) => options.auth.creds.me?.id.startsWith(`${number.phone.slice(1)}:`)).length;
      const sockets = socketsOfNumber();
      socket.closeWith(440);
      await waitForStatus(number, 'conflict');
      assert.equal(socketsOfNumber(), sockets, 'a replaced session does not reconnect by itself');
      assert.match((await operator.get(page)).body, /Restart session/);
      const restarted = await operator.submit(page, `${page}/restart`, {});
      assert.equal(restarted.statusCode, 303, restarted.body);
      assert.equal(socketsOfNumber(), sockets + 1, 'the restart opened one new socket');
      assert.ok(socket.endCalls.length > 0, 'the old socket was ended');
      whatsapp.latest.openAs(number.phone.slice(1));
      await waitForStatus(number, 'connected');
      assert.equal((await send(number, '+14155550104')).statusCode, 200);
    });
  });
}
