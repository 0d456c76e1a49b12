import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const PASSWORD = 'correct horse battery';

// The numbers page shows a paused number (why, since, until) and lets owners and admins resume it.
for (const dialect of dialects) {
  describe(`dashboard: paused numbers (${dialect})`, () => {
    let test: TestGateway;
    let number: WhatsAppNumber;
    let owner: DashboardClient;
    let member: DashboardClient;
    let outsider: DashboardClient;

    const signedIn = async (accountId: string, role: 'owner' | 'member') => {
      const email = `${role}-${accountId}@pauses.test`;
      await createTestUser(test.gateway, { accountId, email, password: PASSWORD, role });
      const client = new DashboardClient(test);
      assert.equal((await client.signIn(email, PASSWORD)).statusCode, 303);
      return client;
    };

    before(async () => {
      test = await startTestGateway(dialect);
      const accountId = (await test.gateway.accounts.createAccount({ name: 'Acme', plan: 'pro' })).id;
      const otherId = (await test.gateway.accounts.createAccount({ name: 'Globex', plan: 'pro' })).id;
      number = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      owner = await signedIn(accountId, 'owner');
      member = await signedIn(accountId, 'member');
      outsider = await signedIn(otherId, 'owner');
    });
    after(() => test?.close());

    it('shows the pause with its reason and lift time, and the owner resumes it with the form', async () => {
      const until = new Date(Date.now() + 3_600_000);
      await test.gateway.supervisor.simulatorFor(number)!.restrict(number, { kind: 'restricted', until });
      for (let tries = 0; tries < 200 && test.gateway.pauses.holdOf(number.id) === null; tries++)
        await new Promise((resolve) => setTimeout(resolve, 10));

      const page = await owner.get('/numbers');
      assert.match(page.body, /<h2 id="paused-numbers">Paused<\/h2>/);
      assert.match(page.body, /WhatsApp restricted it \(463\)/);
      assert.ok(page.body.includes(`datetime="${until.toISOString()}"`), 'the lift time is shown');
      assert.match((await member.get('/numbers')).body, /WhatsApp restricted it/, 'a member sees it too');
      assert.doesNotMatch((await member.get('/numbers')).body, /\/resume"/, 'but gets no Resume button');

      const refusedMember = await member.submit('/numbers', `/numbers/${number.id}/resume`, {});
      assert.equal(refusedMember.statusCode, 403);
      const refusedOutsider = await outsider.submit('/numbers', `/numbers/${number.id}/resume`, {});
      assert.equal(refusedOutsider.statusCode, 404, "another account's number is not found");
      const noToken = await owner.post(`/numbers/${number.id}/resume`, {}, { csrf: false });
      assert.equal(noToken.statusCode, 403, 'a post without the CSRF token is refused');
      assert.notEqual(test.gateway.pauses.holdOf(number.id), null, 'none of those resumed it');

      const resumed = await owner.submit('/numbers', `/numbers/${number.id}/resume`, {});
      assert.equal(resumed.statusCode, 303, resumed.body);
      assert.equal(test.gateway.pauses.holdOf(number.id), null);
      assert.doesNotMatch((await owner.get('/numbers')).body, /paused-numbers/);
    });
  });
}
