import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import type { Json } from '../../support/json.ts';

const PESTER = '+14155550177';

// The blocklist on the sandbox: kept by the simulated network as WhatsApp keeps it, which then
// delivers nothing from a blocked contact, whether a simulated phone or another sandbox number.
for (const dialect of dialects) {
  describe(`a number's blocklist (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway, { numbers: 2 });
      other = await seedAccount(test.gateway);
    });
    after(() => test?.close());

    const as = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });
    const list = (fromPhone: string, prefix = '') =>
      test.inject({ method: 'GET', url: `${prefix}/blocklist?from_phone=${encodeURIComponent(fromPhone)}`, headers: as(account.apiKey) });
    const unblock = (fromPhone: string, phone: string, prefix = '') =>
      test.inject({
        method: 'DELETE',
        url: `${prefix}/blocklist/${encodeURIComponent(phone)}?from_phone=${encodeURIComponent(fromPhone)}`,
        headers: as(account.apiKey),
      });
    const received = async (text: string) =>
      (await test.gateway.store.db
        .selectFrom('messages')
        .select('id')
        .where('text', '=', text)
        .where('direction', '=', 'inbound')
        .executeTakeFirst()) !== undefined;

    it("a blocked phone's messages are not delivered; unblocked, they are again", async () => {
      const [ours] = account.phones;
      const blocked = await test.post('/blocklist', { from_phone: ours, phone: '+1 415 555 0177' }, account.apiKey);
      assert.deepEqual([blocked.statusCode, blocked.json()], [200, { from_phone: ours, phone: PESTER, blocked: true }]);
      assert.equal(
        (await test.post('/api/blocklist', { from_phone: ours, phone: PESTER }, account.apiKey)).statusCode,
        200,
        'blocking twice changes nothing',
      );
      assert.deepEqual((await list(ours!)).json(), { from_phone: ours, contacts: [{ phone: PESTER, lid: null }] });

      const refused = await test.post('/sandbox/receive', { from_phone: PESTER, to_phone: ours, message: 'let me in' }, account.apiKey);
      assert.deepEqual([refused.statusCode, refused.json().error, refused.json().meta?.field], [409, 'sender_blocked', 'from_phone']);
      assert.equal(await received('let me in'), false);

      const lifted = await unblock(ours!, PESTER, '/api');
      assert.deepEqual([lifted.statusCode, lifted.json().blocked], [200, false]);
      assert.deepEqual((await list(ours!, '/api')).json().contacts, []);
      const delivered = await test.post('/sandbox/receive', { from_phone: PESTER, to_phone: ours, message: 'hello again' }, account.apiKey);
      assert.equal(delivered.statusCode, 200, delivered.body);
    });

    it('a sandbox number blocked by another is answered sent, as WhatsApp does, and the message never arrives', async () => {
      const [blocker, blockee] = account.phones;
      assert.equal((await test.post('/blocklist', { from_phone: blocker, phone: blockee }, account.apiKey)).statusCode, 200);
      const sent = await test.post('/send_message', { from_phone: blockee, to_phone: blocker, message: 'into the void' }, account.apiKey);
      assert.equal(sent.statusCode, 200, sent.body);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await received('into the void'), false, 'the blocker never got it');
      const status = await test.inject({ method: 'GET', url: `/messages/${sent.json().message_id}`, headers: as(account.apiKey) });
      assert.equal(status.json().status, 'sent', 'one tick: never delivered');
      await unblock(blocker!, blockee!);
    });

    it("refuses bad phones, another account's number, unknown fields and a session that is down", async () => {
      const [ours] = account.phones;
      const cases: [Promise<{ statusCode: number; json(): Json }>, number, string][] = [
        [test.post('/blocklist', { from_phone: ours, phone: 'nope' }, account.apiKey), 400, 'invalid_phone_number'],
        [test.post('/blocklist', { from_phone: ours }, account.apiKey), 400, 'invalid_request'],
        [test.post('/blocklist', { from_phone: ours, phone: PESTER, forever: true }, account.apiKey), 400, 'invalid_request'],
        [test.post('/blocklist', { from_phone: other.phones[0], phone: PESTER }, account.apiKey), 403, 'phone_not_owned'],
        [list('x'), 400, 'invalid_phone_number'],
        [test.inject({ method: 'GET', url: '/blocklist', headers: as(account.apiKey) }), 400, 'invalid_request'],
        [list(other.phones[0]!), 403, 'phone_not_owned'],
        [unblock(ours!, 'nope'), 400, 'invalid_phone_number'],
        [unblock(other.phones[0]!, PESTER), 403, 'phone_not_owned'],
      ];
      for (const [request, status, error] of cases) {
        const response = await request;
        assert.deepEqual([response.statusCode, response.json().error], [status, error]);
      }
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), ours!, 'disconnected');
      try {
        const down = await test.post('/blocklist', { from_phone: ours, phone: PESTER }, account.apiKey);
        assert.deepEqual([down.statusCode, down.json().error], [503, 'number_not_connected']);
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), ours!, 'connected');
      }
    });
  });
}
