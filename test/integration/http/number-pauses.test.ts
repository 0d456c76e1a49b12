import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { eventually, payloadOf, webhookEnv } from '../../support/delivery-support.ts';

const CUSTOMER = '+14155550100';

// A number WhatsApp stops (rehearsed on the sandbox network) or a person pauses holds its sends:
// 503 number_paused, number.paused and number.resumed to a real receiver, and a resume at the
// lift time, by the API, or never before it.
for (const dialect of dialects) {
  describe(`number pauses (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let account: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, webhookEnv());
      test.gateway.deliveryWorker.start();
      receiver = await WebhookReceiver.start();
      account = await seedAccount(test.gateway, { numbers: 4 });
      other = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: receiver.url(),
        eventTypes: ['number.paused', 'number.resumed'],
      });
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const send = (fromPhone: string) =>
      test.post('/send_message', { from_phone: fromPhone, to_phone: CUSTOMER, message: 'hello' }, account.apiKey);
    const eventsOf = (phone: string, event: string) =>
      receiver.requests.map(payloadOf).filter((payload) => payload.event === event && payload.number === phone);
    const waitForEvent = (phone: string, event: string, count = 1) =>
      receiver.waitForRequests(
        count,
        (request: ReceivedRequest) => payloadOf(request).event === event && payloadOf(request).number === phone,
      );
    const listed = async (phone: string) => {
      const response = await test.inject({ method: 'GET', url: '/api/numbers', headers: { authorization: `Bearer ${account.apiKey}` } });
      return (response.json().numbers as { phone: string; paused: unknown; can_send: boolean }[]).find((number) => number.phone === phone)!;
    };

    it('a simulated restriction pauses the number at once, refuses sends 503 with Retry-After, and resumes at its lift time', async () => {
      const phone = account.phones[0]!;
      assert.equal((await send(phone)).statusCode, 200, 'it sends before');
      // Long enough that a loaded machine still sends into the pause before it lifts (2 s was not).
      const liftAfterSeconds = 8;
      const restricted = await test.post(
        '/sandbox/restrict',
        { phone, kind: 'restricted', lift_after_seconds: liftAfterSeconds },
        account.apiKey,
      );
      assert.equal(restricted.statusCode, 200, restricted.body);
      const until = restricted.json().until as string;

      const [paused] = await waitForEvent(phone, 'number.paused');
      assert.deepEqual(
        { ...payloadOf(paused!), since: undefined, webhook_id: undefined },
        {
          event: 'number.paused',
          webhook_id: undefined,
          number: phone,
          reason: 'restricted',
          since: undefined,
          until,
          detail: 'the sandbox network restricted this number (463), as asked',
        },
      );
      const refused = await send(phone);
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().error, 'number_paused');
      assert.deepEqual(
        { ...refused.json().meta, retry_after_seconds: undefined },
        { from_phone: phone, reason: 'restricted', until, retry_after_seconds: undefined },
      );
      assert.ok(
        Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= liftAfterSeconds,
        `Retry-After ${refused.headers['retry-after']}`,
      );
      const shown = await listed(phone);
      assert.deepEqual({ ...(shown.paused as object), since: undefined }, { reason: 'restricted', since: undefined, until });
      assert.equal(shown.can_send, false);

      const [resumed] = await waitForEvent(phone, 'number.resumed');
      assert.equal(payloadOf(resumed!).reason, 'lifted');
      assert.ok(Date.parse(String(payloadOf(resumed!).at)) >= Date.parse(until), 'not before the lift time');
      assert.equal((await send(phone)).statusCode, 200, 'it sends again');
      assert.equal((await listed(phone)).paused, null);
      assert.equal(eventsOf(phone, 'number.paused').length, 1, 'one pause, one event');
    });

    it('a simulated rate-overlimit answers the send 429, then holds the number until the lift time', async () => {
      const phone = account.phones[1]!;
      const restricted = await test.post('/sandbox/restrict', { phone, kind: 'rate_overlimit', lift_after_seconds: 60 }, account.apiKey);
      assert.equal(restricted.statusCode, 200, restricted.body);
      assert.equal((await listed(phone)).paused, null, 'nothing is paused before a send meets the limit');

      const limited = await send(phone);
      assert.equal(limited.statusCode, 429, limited.body);
      assert.equal(limited.json().error, 'rate_limited');
      const [paused] = await waitForEvent(phone, 'number.paused');
      assert.equal(payloadOf(paused!).reason, 'rate_limited');
      assert.equal(payloadOf(paused!).until, restricted.json().until);
      const liftsAt = Date.parse(restricted.json().until as string);
      const askedAt = Date.now();
      const refused = await send(phone);
      const answeredAt = Date.now();
      assert.deepEqual([refused.statusCode, refused.json().error, refused.json().meta.reason], [503, 'number_paused', 'rate_limited']);
      // The seconds left until the lift, as they stood while the request was answered: however
      // long a loaded machine took to get here, the header counts down to the same lift time.
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(
        retryAfter >= Math.floor((liftsAt - answeredAt) / 1000) && retryAfter <= Math.ceil((liftsAt - askedAt) / 1000) && retryAfter >= 1,
        `Retry-After ${retryAfter} for a lift at ${new Date(liftsAt).toISOString()}, asked ${new Date(askedAt).toISOString()}`,
      );
    });

    it('a pause by the API holds until the API resumes it, with events for both, and survives a restart', async () => {
      const phone = account.phones[2]!;
      const paused = await test.post(
        `/numbers/${encodeURIComponent(phone)}/pause`,
        { reason: 'banned; moving to a new number' },
        account.apiKey,
      );
      assert.equal(paused.statusCode, 200, paused.body);
      assert.deepEqual({ ...paused.json().paused, since: undefined }, { reason: 'manual', since: undefined, until: null });
      const [event] = await waitForEvent(phone, 'number.paused');
      assert.deepEqual(
        [payloadOf(event!).reason, payloadOf(event!).until, payloadOf(event!).detail],
        ['manual', null, 'banned; moving to a new number'],
      );

      const refused = await send(phone);
      assert.deepEqual([refused.statusCode, refused.json().error, refused.json().meta.until], [503, 'number_paused', null]);
      // Every 503 says when to look again: a pause nobody set a lift time for, in a minute.
      assert.deepEqual([refused.headers['retry-after'], refused.json().meta.retry_after_seconds], ['60', 60]);

      await test.restart();
      test.gateway.deliveryWorker.start();
      await test.gateway.supervisor.sessionsStarted();
      const afterRestart = await send(phone);
      assert.deepEqual([afterRestart.statusCode, afterRestart.json().error], [503, 'number_paused'], 'the new process holds it too');

      const number = await test.gateway.numbers.findNumber(accountScope(account.accountId), phone);
      const resumed = await test.post(`/api/numbers/${number.id}/resume`, undefined, account.apiKey);
      assert.equal(resumed.statusCode, 200, resumed.body);
      assert.equal(resumed.json().paused, null);
      const [event2] = await waitForEvent(phone, 'number.resumed');
      assert.equal(payloadOf(event2!).reason, 'manual');
      assert.equal((await send(phone)).statusCode, 200);
      const again = await test.post(`/numbers/${number.id}/resume`, undefined, account.apiKey);
      assert.equal(again.statusCode, 200, 'resuming a number that is not paused is answered as it is');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(eventsOf(phone, 'number.resumed').length, 1, 'and tells nobody');
    });

    it('a lift time that passed while the gateway was down resumes the number when it starts', async () => {
      const phone = account.phones[3]!;
      assert.equal(
        (await test.post('/sandbox/restrict', { phone, kind: 'restricted', lift_after_seconds: 1 }, account.apiKey)).statusCode,
        200,
      );
      await waitForEvent(phone, 'number.paused');
      await test.gateway.pauses.stop();
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await test.restart();
      test.gateway.deliveryWorker.start();
      await test.gateway.supervisor.sessionsStarted();
      const [resumed] = await waitForEvent(phone, 'number.resumed');
      assert.equal(payloadOf(resumed!).reason, 'lifted');
      await eventually(async () => ((await send(phone)).statusCode === 200 ? true : undefined), 'a send from the resumed number');
    });

    it("another account's number is not found, to pause, resume or restrict", async () => {
      const phone = account.phones[0]!;
      for (const url of [`/numbers/${encodeURIComponent(phone)}/pause`, `/numbers/${encodeURIComponent(phone)}/resume`]) {
        const response = await test.post(url, {}, other.apiKey);
        assert.deepEqual([response.statusCode, response.json().error], [404, 'number_not_found'], url);
      }
      const restrict = await test.post('/sandbox/restrict', { phone, kind: 'restricted', lift_after_seconds: 5 }, other.apiKey);
      assert.deepEqual([restrict.statusCode, restrict.json().error], [403, 'phone_not_owned']);
      assert.equal((await listed(phone)).paused, null, 'and nothing was paused');
    });

    it('refuses an unknown field, kind or lift time', async () => {
      const phone = account.phones[0]!;
      for (const body of [
        { phone, kind: 'banned', lift_after_seconds: 5 },
        { phone, kind: 'restricted', lift_after_seconds: 0 },
        { phone, kind: 'restricted' },
      ]) {
        const response = await test.post('/sandbox/restrict', body, account.apiKey);
        assert.deepEqual([response.statusCode, response.json().error], [400, 'invalid_request'], JSON.stringify(body));
      }
      const response = await test.post(`/numbers/${encodeURIComponent(phone)}/pause`, { reason: 'x', until: 'tomorrow' }, account.apiKey);
      assert.deepEqual([response.statusCode, response.json().error, response.json().meta.problem], [400, 'invalid_request', 'unknown']);
    });
  });
}
