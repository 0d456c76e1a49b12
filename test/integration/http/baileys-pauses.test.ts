/**
 * WhatsApp stopping a real number, at the Baileys boundary: fake sockets emit what Baileys
 * emits (Boom errors, failed receipts, connection.update's reachoutTimeLock, a 401 close), and
 * everything from the session inwards is real, down to the webhook receiver.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Boom } from '@hapi/boom';
import { proto, ReachoutTimelockEnforcementType } from 'baileys';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { payloadOf, webhookEnv } from '../../support/delivery-support.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';

const CUSTOMER = '+14155550123';

for (const dialect of dialects) {
  describe(`a Baileys number that WhatsApp stops pauses (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect, webhookEnv());
      linked.test.gateway.deliveryWorker.start();
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: receiver.url(),
        eventTypes: ['number.paused', 'number.resumed', 'session.status'],
      });
    });

    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    const phone = () => linked.number.phone;
    const send = () => linked.test.post('/send_message', { from_phone: phone(), to_phone: CUSTOMER, message: 'hello' }, linked.apiKey);
    const events = (event: string) => receiver.requests.map(payloadOf).filter((payload) => payload.event === event);
    const waitFor = (event: string, count: number) =>
      receiver.waitForRequests(count, (request: ReceivedRequest) => payloadOf(request).event === event);
    const resumeByApi = async () =>
      assert.equal((await linked.test.post(`/numbers/${linked.number.id}/resume`, undefined, linked.apiKey)).statusCode, 200);
    const restore = () => {
      linked.socket.answerSend = async (jid) =>
        proto.WebMessageInfo.fromObject({
          key: { remoteJid: jid, fromMe: true, id: `3EB0OK${Date.now()}` },
          message: { conversation: 'hello' },
        });
    };

    it('a send answered 463 is refused 503 number_paused, the session stays connected, and nothing more goes to WhatsApp', async () => {
      linked.socket.answerSend = async () => {
        throw new Boom('restricted', { statusCode: 463 });
      };
      const refused = await send();
      assert.equal(refused.statusCode, 503, refused.body);
      assert.deepEqual(
        [refused.json().error, refused.json().meta.reason, refused.json().meta.until],
        ['number_paused', 'restricted', null],
      );
      const [paused] = await waitFor('number.paused', 1);
      assert.deepEqual([payloadOf(paused!).reason, payloadOf(paused!).until], ['restricted', null]);
      assert.equal(
        (await linked.test.gateway.numbers.findNumber(operatorScope(), linked.number.id)).status,
        'connected',
        'not failed: it still receives',
      );

      const sendsSoFar = linked.socket.sendCalls.length;
      restore();
      const held = await send();
      assert.deepEqual([held.statusCode, held.json().error], [503, 'number_paused']);
      assert.equal(linked.socket.sendCalls.length, sendsSoFar, 'no further send reached WhatsApp');
      // WhatsApp said no time lock is behind it (the fake's default answer): that lifts nothing.
      assert.ok(linked.socket.timelockFetches >= 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(events('number.resumed').length, 0);

      await resumeByApi();
      await waitFor('number.resumed', 1);
      assert.equal((await send()).statusCode, 200);
    });

    it("reachoutTimeLock pauses with WhatsApp's lift time, and the number resumes by itself at that time", async () => {
      // Long enough that the send below meets the lock on a busy machine (it lifted before a send
      // under load at 1.5 s), short enough to see it lift by itself.
      const ends = new Date(Date.now() + 4_000);
      linked.socket.emit('connection.update', {
        reachoutTimeLock: { isActive: true, timeEnforcementEnds: ends, enforcementType: ReachoutTimelockEnforcementType.BIZ_QUALITY },
      });
      const paused = (await waitFor('number.paused', 2)).at(-1)!;
      assert.deepEqual(
        [payloadOf(paused).reason, payloadOf(paused).until, payloadOf(paused).detail],
        ['reachout_timelock', ends.toISOString(), 'BIZ_QUALITY'],
      );
      const refused = await send();
      assert.deepEqual(
        [refused.statusCode, refused.json().meta.reason, refused.json().meta.until],
        [503, 'reachout_timelock', ends.toISOString()],
      );
      const resumed = (await waitFor('number.resumed', 2)).at(-1)!;
      assert.equal(payloadOf(resumed).reason, 'lifted');
      assert.ok(Date.parse(String(payloadOf(resumed).at)) >= ends.getTime());
      assert.equal((await send()).statusCode, 200);
    });

    it('WhatsApp lifting a time lock early resumes the number then', async () => {
      linked.socket.emit('connection.update', {
        reachoutTimeLock: {
          isActive: true,
          timeEnforcementEnds: new Date(Date.now() + 3_600_000),
          enforcementType: ReachoutTimelockEnforcementType.DEFAULT,
        },
      });
      await waitFor('number.paused', 3);
      linked.socket.emit('connection.update', {
        reachoutTimeLock: { isActive: false, enforcementType: ReachoutTimelockEnforcementType.DEFAULT },
      });
      const resumed = (await waitFor('number.resumed', 3)).at(-1)!;
      assert.equal(payloadOf(resumed).reason, 'lifted');
    });

    it('rate-overlimit on a send answers 429, then holds the number for the backoff window', async () => {
      linked.socket.answerSend = async () => {
        throw new Boom('rate-overlimit', { statusCode: 429 });
      };
      const limited = await send();
      assert.deepEqual([limited.statusCode, limited.json().error], [429, 'rate_limited']);
      const paused = (await waitFor('number.paused', 4)).at(-1)!;
      assert.equal(payloadOf(paused).reason, 'rate_limited');
      const windowSeconds = (Date.parse(String(payloadOf(paused).until)) - Date.parse(String(payloadOf(paused).since))) / 1000;
      assert.ok(windowSeconds >= 59 && windowSeconds <= 61, `a 60 s window, not ${windowSeconds} s`);
      restore();
      const held = await send();
      assert.deepEqual([held.statusCode, held.json().meta.reason], [503, 'rate_limited']);
      await resumeByApi();
      await waitFor('number.resumed', 4);
    });

    it('a log-out pauses the number until it is linked again, which resumes it', async () => {
      linked.socket.closeWith(401);
      const paused = (await waitFor('number.paused', 5)).at(-1)!;
      assert.deepEqual([payloadOf(paused).reason, payloadOf(paused).until], ['logged_out', null]);

      // Linked again, as an operator does: a new socket, scanned by the number's own phone.
      const { gateway } = linked.test;
      const sockets = linked.whatsapp.sockets.length;
      const attempt = await gateway.supervisor.link(await gateway.numbers.findNumber(operatorScope(), linked.number.id));
      assert.equal(linked.whatsapp.sockets.length, sockets + 1);
      linked.whatsapp.latest.openAs(phone().slice(1));
      const resumed = (await waitFor('number.resumed', 5)).at(-1)!;
      assert.equal(payloadOf(resumed).reason, 'relinked');
      await attempt.stop().catch(ignoreCleanupFailure);
    });
  });
}
