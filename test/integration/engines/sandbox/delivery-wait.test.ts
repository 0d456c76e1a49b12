import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_DELIVERY_WAIT_MS } from '../../../../src/engines/sandbox/sandbox-network.ts';
import { accountScope, operatorScope } from '../../../../src/domain/tenant-scope.ts';
import { dialects } from '../../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../../support/gateway.ts';
import { until } from '../../../support/leases.ts';
import { sleep } from '../../../support/waiting.ts';

// The sandbox network's delivery wait is the test's to set (GatewayBoundaries.sandboxDeliveryWaitMs).
for (const dialect of dialects) {
  describe(`the sandbox network's delivery wait, set by the code that builds the gateway (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect, {}, { sandboxDeliveryWaitMs: 120_000 });
    });
    after(() => test?.close());

    it('a send to a number that is away is answered only once it is back and has stored the message, past the default wait', async () => {
      const seeded = await seedAccount(test.gateway, { numbers: 2 });
      await test.gateway.supervisor.numberAdded();
      const [from, to] = await Promise.all(seeded.phones.map((phone) => test.gateway.numbers.findNumber(operatorScope(), phone)));
      await until(() => test.gateway.supervisor.sessionStatus(to!) === 'connected', 'the recipient connected once');
      // Its session stops and its lease stays: the network keeps what is sent to it.
      await test.gateway.supervisor.leaseLost(to!.id);

      let answered = false;
      const sending = test
        .post('/send_message', { from_phone: from!.phone, to_phone: to!.phone, message: 'kept for you' }, seeded.apiKey)
        .finally(() => {
          answered = true;
        });
      await sleep(DEFAULT_DELIVERY_WAIT_MS + 500);
      assert.equal(answered, false, 'the send waits past the default delivery wait');

      await test.gateway.supervisor.resume(to!);
      const response = await sending;
      assert.equal(response.statusCode, 200, response.body);
      // Read at once, not waited for: the answer came after the recipient stored its copy.
      const inbound = await test.gateway.history.page(accountScope(seeded.accountId), { direction: 'inbound', limit: 20 });
      assert.deepEqual(
        inbound.messages.map((message) => [message.text, message.toPhone]),
        [['kept for you', to!.phone]],
      );
    });
  });
}
