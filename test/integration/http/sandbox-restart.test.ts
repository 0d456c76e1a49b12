import { SYSTEM_ACTOR } from '../../../src/domain/audit.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';

const RECIPIENT = '+14155550133';

// An operator mends a sandbox number whose connection was taken over the way a real number's is
// mended: `wagw number restart` connects it again, and sends from it succeed once more.
for (const dialect of dialects) {
  describe(`restarting a sandbox number's session (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test?.close());

    it('a sandbox number left in conflict by another connection is restarted, and sends from it are answered 200 again', async () => {
      const seeded = await seedAccount(test.gateway);
      const phone = seeded.phones[0]!;
      const send = () => test.post('/send_message', { from_phone: phone, to_phone: RECIPIENT, message: 'hello again' }, seeded.apiKey);
      assert.equal((await send()).statusCode, 200);

      const intruder = await test.gateway.sandboxNetwork.connect(phone, 'elsewhere', {
        incoming: async () => undefined,
        receipt: () => undefined,
        replaced: () => undefined,
      });
      const stored = () => test.gateway.numbers.findNumber(operatorScope(), phone);
      for (let tries = 0; tries < 100 && (await stored()).status !== 'conflict'; tries++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal((await stored()).status, 'conflict');
      assert.equal((await send()).statusCode, 503);
      await intruder.close();

      await test.gateway.numberControl.restart({ scope: operatorScope(), actor: SYSTEM_ACTOR }, await stored());
      assert.equal((await stored()).status, 'connected');
      const again = await send();
      assert.equal(again.statusCode, 200, again.body);
    });

    it('a sandbox number that is connected is not restarted, as a real one is not', async () => {
      const seeded = await seedAccount(test.gateway);
      const number = await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      await assert.rejects(
        test.gateway.numberControl.restart({ scope: operatorScope(), actor: SYSTEM_ACTOR }, number),
        (error: Error & { code?: string }) => error.code === 'invalid_argument' && /is connected/.test(error.message),
      );
    });
  });
}
