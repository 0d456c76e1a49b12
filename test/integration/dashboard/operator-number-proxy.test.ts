import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';

/**
 * A number's proxy on its operator console page (ADR 0063): set and cleared by an operator, each an
 * audit row naming the user; the page shows it only redacted and never echoes a refused URL;
 * anyone else is refused.
 */

const PASSWORD = 'correct horse battery';
const PROXY_PASSWORD = 'dashb0ard-pw';

for (const dialect of dialects) {
  describe(`a number's proxy in the operator console (${dialect})`, () => {
    let test: TestGateway;
    let operator: DashboardClient;
    let accountId: string;

    const signedIn = async (email: string) => {
      const client = new DashboardClient(test);
      assert.equal((await client.signIn(email, PASSWORD)).statusCode, 303);
      return client;
    };

    before(async () => {
      test = await startTestGateway(dialect);
      accountId = (await test.gateway.accounts.createAccount({ name: 'Proxied' })).id;
      await createTestUser(test.gateway, {
        email: 'op@proxy-console.test',
        accountId: null,
        password: PASSWORD,
        isOperator: true,
        role: 'admin',
      });
      await createTestUser(test.gateway, { email: 'owner@proxy-console.test', accountId, password: PASSWORD, role: 'owner' });
      operator = await signedIn('op@proxy-console.test');
    });
    after(() => test.close());

    it('sets a proxy shown redacted, refuses a bad one without echoing it, and clears it, each an audit row', async () => {
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'sandbox' });
      const page = `/operator/numbers/${number.id}`;
      assert.match((await operator.get(page)).body, /none: connects directly/);

      const set = await operator.post(`${page}/proxy`, { url: `socks5://ops:${PROXY_PASSWORD}@proxy.example:1080` });
      assert.equal(set.statusCode, 303, set.body);
      assert.equal(set.headers.location, page);
      const shown = await operator.get(page);
      assert.ok(shown.body.includes('socks5://***@proxy.example:1080'), 'the page shows the proxy redacted');
      assert.ok(!shown.body.includes(PROXY_PASSWORD));

      const refused = await operator.post(`${page}/proxy`, { url: `ftp://ops:${PROXY_PASSWORD}@proxy.example:21` });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /scheme is one of http, https, socks5, socks5h/);
      assert.ok(!refused.body.includes(PROXY_PASSWORD), 'a refused URL is not echoed');
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).proxy, 'socks5://***@proxy.example:1080');

      assert.equal((await operator.post(`${page}/proxy/clear`, {})).statusCode, 303);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).proxy, null);
      const rows = await test.gateway.audit.list(operatorScope(), { accountId, limit: 2 });
      assert.deepEqual(
        rows.map((row) => [row.action, row.actor.kind, row.actor.label, row.details?.proxy]),
        [
          ['number.proxy_cleared', 'user', 'op@proxy-console.test', undefined],
          ['number.proxy_set', 'user', 'op@proxy-console.test', 'socks5://***@proxy.example:1080'],
        ],
      );
    });

    it("refuses the account's own owner with 403, and changes nothing", async () => {
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'sandbox' });
      const owner = await signedIn('owner@proxy-console.test');
      await owner.get('/');
      const response = await owner.post(`/operator/numbers/${number.id}/proxy`, { url: 'http://proxy.example:3128' });
      assert.equal(response.statusCode, 403);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).proxy, null);
    });
  });
}
