import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { callEventsOf } from '../../support/call-events.ts';

const CALLER = '+14155550142';

// Calls on the sandbox: a simulated phone rings a number, `call` webhooks hear it, and a number
// that rejects calls declines it at once and answers the caller with its reply text.
for (const dialect of dialects) {
  describe(`calls to a sandbox number (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;
    let receiver: WebhookReceiver;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      account = await seedAccount(test.gateway, { numbers: 2 });
      other = await seedAccount(test.gateway);
      receiver = await WebhookReceiver.start();
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url('/calls'), eventTypes: ['call'] });
      test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const patch = (id: string, body: object, apiKey = account.apiKey) =>
      test.inject({
        method: 'PATCH',
        url: `/numbers/${encodeURIComponent(id)}`,
        payload: body,
        headers: { authorization: `Bearer ${apiKey}` },
      });
    const callEvents = (callId: string, count: number) => callEventsOf(receiver, callId, count);

    // Side by side: the first number's call, and the second number's calls (in order), each read by their own call ids.
    describe('each number on its own', { concurrency: true }, () => {
      it('a call that nobody rejects is offered, then missed when it has rung out', async () => {
        const response = await test.post(
          '/sandbox/call',
          { from_phone: CALLER, to_phone: account.phones[0], video: true, rings_for_seconds: 1 },
          account.apiKey,
        );
        assert.equal(response.statusCode, 200, response.body);
        const { call_id: callId } = response.json();
        const [offered, missed] = await callEvents(callId, 2);
        assert.deepEqual(
          [
            offered!.event,
            offered!.status,
            offered!.phone,
            offered!.from_phone,
            offered!.from_lid,
            offered!.group,
            offered!.video,
            offered!.rejected_by_gateway,
          ],
          ['call', 'offered', account.phones[0], CALLER, null, null, true, false],
        );
        assert.deepEqual([missed!.status, missed!.rejected_by_gateway], ['missed', false]);
      });

      // In order (a suite's tests would inherit running side by side): the second undoes what the first set.
      describe('the second number rejects calls, then lets them ring', { concurrency: false }, () => {
        it('a number with reject_calls rejects a call as it rings, and sends the caller its reply text, which is stored as a sent message', async () => {
          const set = await patch(account.phones[1]!, { reject_calls: true, call_reply_text: 'We do not take calls; please write.' });
          assert.equal(set.statusCode, 200, set.body);
          assert.deepEqual(
            [set.json().reject_calls, set.json().call_reply_text, set.json().auto_read],
            [true, 'We do not take calls; please write.', false],
          );

          const response = await test.post(
            '/api/sandbox/call',
            { from_phone: CALLER, to_phone: account.phones[1], rings_for_seconds: 1 },
            account.apiKey,
          );
          assert.equal(response.statusCode, 200, response.body);
          const { call_id: callId } = response.json();
          const [offered, rejected] = await callEvents(callId, 2);
          assert.deepEqual(
            [offered!.status, rejected!.status, rejected!.rejected_by_gateway, rejected!.video],
            ['offered', 'rejected', true, false],
          );
          await new Promise((resolve) => setTimeout(resolve, 1_300));
          assert.equal(
            receiver.requests.filter((request) => JSON.parse(request.body).call_id === callId).length,
            2,
            'a rejected call is never reported missed',
          );

          const reply = await test.gateway.store.db
            .selectFrom('messages')
            .select(['to_phone', 'text', 'direction'])
            .where('from_phone', '=', account.phones[1]!)
            .where('to_phone', '=', CALLER)
            .executeTakeFirst();
          assert.deepEqual(reply, { to_phone: CALLER, text: 'We do not take calls; please write.', direction: 'outbound' });
        });

        it('turning reject_calls off again lets calls ring; settings left out keep their values', async () => {
          const off = await patch(account.phones[1]!, { reject_calls: false });
          assert.deepEqual(
            [off.statusCode, off.json().reject_calls, off.json().call_reply_text],
            [200, false, 'We do not take calls; please write.'],
          );
          const stored = await test.gateway.numbers.findNumber(operatorScope(), account.phones[1]!);
          assert.deepEqual([stored.rejectCalls, stored.callReplyText], [false, 'We do not take calls; please write.']);
          const { call_id: callId } = (
            await test.post('/sandbox/call', { from_phone: CALLER, to_phone: account.phones[1], rings_for_seconds: 1 }, account.apiKey)
          ).json();
          const events = await callEvents(callId, 2);
          assert.deepEqual(
            events.map((event) => event.status),
            ['offered', 'missed'],
          );
        });
      });
    });

    // Alone: it takes the first number's session down for a moment.
    it('refuses bad settings and bad calls with the documented errors', async () => {
      const settings: [object, number, string][] = [
        [{}, 400, 'invalid_request'],
        [{ reject_calls: 'yes' }, 400, 'invalid_request'],
        [{ call_reply_text: '' }, 400, 'invalid_request'],
        [{ call_reply_text: 'x'.repeat(1_001) }, 400, 'invalid_request'],
        [{ ring_tone: 'loud' }, 400, 'invalid_request'],
      ];
      for (const [body, status, error] of settings) {
        const response = await patch(account.phones[0]!, body);
        assert.deepEqual([response.statusCode, response.json().error], [status, error], JSON.stringify(body));
      }
      assert.equal(
        (await patch(other.phones[0]!, { reject_calls: true })).json().error,
        'number_not_found',
        "another account's number is not found",
      );

      const calls: [object, number, string][] = [
        [{ from_phone: 'x', to_phone: account.phones[0] }, 400, 'invalid_phone_number'],
        [{ from_phone: CALLER, to_phone: account.phones[0], rings_for_seconds: 0 }, 400, 'invalid_request'],
        [{ from_phone: CALLER, to_phone: account.phones[0], hold: true }, 400, 'invalid_request'],
        [{ from_phone: CALLER, to_phone: other.phones[0] }, 403, 'phone_not_owned'],
        [{ from_phone: CALLER, to_phone: account.phones[0], group_id: '120363999999999999@g.us' }, 404, 'group_not_found'],
      ];
      for (const [body, status, error] of calls) {
        const response = await test.post('/sandbox/call', body, account.apiKey);
        assert.deepEqual([response.statusCode, response.json().error], [status, error], JSON.stringify(body));
      }
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'disconnected');
      try {
        const down = await test.post('/sandbox/call', { from_phone: CALLER, to_phone: account.phones[0] }, account.apiKey);
        assert.deepEqual([down.statusCode, down.json().error], [503, 'number_not_connected']);
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'connected');
      }
    });
  });
}
