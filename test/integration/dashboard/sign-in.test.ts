import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

for (const dialect of dialects) {
  describe(`dashboard sign-in (${dialect})`, () => {
    let test: TestGateway;
    let accountId: string;
    const password = 'correct horse battery';

    before(async () => {
      test = await startTestGateway(dialect);
      accountId = (await test.gateway.accounts.createAccount({ name: 'Acme', plan: 'pro' })).id;
      await test.gateway.accounts.createUser({ accountId, email: 'owner@acme.test', password, role: 'owner' });
    });
    after(() => test.close());

    it('sends a signed-out visitor of / to the sign-in page', async () => {
      const response = await new DashboardClient(test).get('/');
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/login?next=%2F');
    });

    it('signs in with a new HttpOnly, SameSite=Lax session cookie and shows the overview', async () => {
      const client = new DashboardClient(test);
      const response = await client.signIn('Owner@Acme.test', password);
      assert.equal(response.statusCode, 303);
      const cookie = response.cookies.find((c) => c.name === 'wagw_session');
      assert.ok(cookie, 'a session cookie is set');
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Lax');
      const overview = await client.get('/');
      assert.equal(overview.statusCode, 200);
      assert.match(overview.body, /Acme/);
      assert.match(overview.body, /Pro plan/);
    });
  });
}
