import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { E164 } from '../../../src/domain/phone.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import type { SandboxSimulator } from '../../../src/engines/sandbox/sandbox-simulator.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const CUSTOMER = '+14155550100' as E164;

// POST /typing: the state reaches the chat through the number's session, and ends by itself.
for (const dialect of dialects) {
  describe(`showing typing to a chat (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_TYPING_SECONDS: '1' });
      account = await seedAccount(test.gateway);
      other = await seedAccount(test.gateway);
    });

    after(() => test?.close());

    /** What the simulated phone at the other end is shown. */
    async function shown(): Promise<string | undefined> {
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      return (test.gateway.supervisor.simulatorFor(number) as SandboxSimulator).presenceShown(number, CUSTOMER);
    }

    it('composing is shown at once and ends by itself; paused ends it at once, at both paths', async () => {
      const started = Date.now();
      const response = await test.post(
        '/typing',
        { from_phone: account.phones[0], to_phone: '+1 415 555 0100', state: 'composing' },
        account.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(
        { ...(response.json() as object), ends_at: undefined },
        { from_phone: account.phones[0], to_phone: CUSTOMER, state: 'composing', ends_at: undefined },
      );
      const endsIn = Date.parse(response.json().ends_at) - started;
      assert.ok(endsIn >= 900 && endsIn <= 2_000, `ends after WAGW_TYPING_SECONDS, not ${endsIn} ms`);
      assert.equal(await shown(), 'composing');
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      assert.equal(await shown(), 'paused', 'the gateway ended it when the client did not');

      await test.post('/api/typing', { from_phone: account.phones[0], to_phone: CUSTOMER, state: 'recording' }, account.apiKey);
      assert.equal(await shown(), 'recording');
      const paused = await test.post('/api/typing', { from_phone: account.phones[0], to_phone: CUSTOMER, state: 'paused' }, account.apiKey);
      assert.deepEqual([paused.statusCode, paused.json().ends_at, await shown()], [200, null, 'paused']);
    });

    it("refuses a bad state, a bad phone, another account's number and a session that is down", async () => {
      const cases: [unknown, number, string, string | undefined][] = [
        [{ from_phone: account.phones[0], to_phone: CUSTOMER, state: 'dancing' }, 400, 'invalid_request', 'state'],
        [{ from_phone: account.phones[0], to_phone: 'x', state: 'composing' }, 400, 'invalid_phone_number', 'to_phone'],
        [{ from_phone: account.phones[0], to_phone: CUSTOMER }, 400, 'invalid_request', 'state'],
        [{ from_phone: other.phones[0], to_phone: CUSTOMER, state: 'composing' }, 403, 'phone_not_owned', 'from_phone'],
      ];
      for (const [body, status, error, field] of cases) {
        const response = await test.post('/typing', body, account.apiKey);
        assert.deepEqual(
          [response.statusCode, response.json().error, response.json().meta?.field],
          [status, error, field],
          JSON.stringify(body),
        );
      }
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'disconnected');
      try {
        const down = await test.post('/typing', { from_phone: account.phones[0], to_phone: CUSTOMER, state: 'composing' }, account.apiKey);
        assert.deepEqual([down.statusCode, down.json().error, down.json().meta.status], [503, 'number_not_connected', 'disconnected']);
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'connected');
      }
    });
  });
}
