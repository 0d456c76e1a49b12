import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

for (const dialect of dialects) {
  describe(`past its backlog a node answers 503 overloaded with Retry-After instead of queueing (${dialect})`, () => {
    const limit = 2;
    let test: TestGateway;
    let caller: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_MAX_PENDING_SENDS: String(limit) });
      caller = await seedAccount(test.gateway, { plan: 'enterprise' });
    });
    after(() => test?.close());

    const send = (index: number) =>
      test.post(
        '/send_message',
        { from_phone: caller.phones[0], to_phone: `+1415555${String(1000 + index)}`, message: `burst ${index}` },
        caller.apiKey,
      );

    it('a burst past WAGW_MAX_PENDING_SENDS is partly refused at once, the rest sent, and nothing refused is stored', async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, (_unused, index) => send(index)));
      const refused = answers.filter((answer) => answer.statusCode === 503);
      const sent = answers.filter((answer) => answer.statusCode === 200);
      assert.equal(refused.length + sent.length, answers.length, answers.map((answer) => answer.statusCode).join(','));
      assert.ok(refused.length > 0, 'some were refused');
      assert.ok(sent.length >= limit, 'as many as the limit were sent');
      for (const answer of refused) {
        assert.equal(answer.json().error, 'overloaded');
        assert.equal(answer.headers['retry-after'], '1');
        assert.deepEqual(Object.keys(answer.json().meta).sort(), ['limit', 'pending_sends', 'retry_after_seconds']);
        assert.equal(answer.json().meta.limit, limit);
      }
      const stored = await test.gateway.store.db.selectFrom('messages').select('text').where('direction', '=', 'outbound').execute();
      assert.equal(stored.length, sent.length, 'only the sends answered 200 were stored');
    });

    it('once the backlog has cleared, the next send goes through', async () => {
      assert.equal((await send(99)).statusCode, 200);
    });
  });
}
