import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { User } from '../../../src/domain/model.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { LeaseKeeper } from '../../../src/cluster/lease-keeper.ts';

const PASSWORD = 'correct horse battery';

/** The value of a SecretReveal input, as a browser would show it. */
function revealed(body: string, id: string): string | undefined {
  return new RegExp(`id="${id}"[^>]*value="([^"]*)"`).exec(body)?.[1];
}

for (const dialect of dialects) {
  describe(`dashboard operator console (${dialect})`, () => {
    let test: TestGateway;
    let operatorUser: User;
    let operator: DashboardClient;
    let counter = 0;
    const email = (name: string) => `${name}${++counter}@operator-test.test`;

    const createAccountWithOwner = async (name: string) => {
      const account = await test.gateway.accounts.createAccount({ name });
      const { user } = await createTestUser(test.gateway, {
        accountId: account.id,
        email: email('owner'),
        password: PASSWORD,
        role: 'owner',
      });
      return { account, owner: user };
    };
    const signedIn = async (userEmail: string, password = PASSWORD) => {
      const client = new DashboardClient(test);
      assert.equal((await client.signIn(userEmail, password)).statusCode, 303, `${userEmail} signs in`);
      return client;
    };

    before(async () => {
      test = await startTestGateway(dialect);
      operatorUser = (
        await createTestUser(test.gateway, {
          email: 'op@operator-test.test',
          accountId: null,
          password: PASSWORD,
          isOperator: true,
          role: 'admin',
        })
      ).user;
      operator = await signedIn(operatorUser.email);
    });
    after(() => test.close());

    it('refuses every operator page and action to a non-operator with 403, and changes nothing', async () => {
      const { account, owner } = await createAccountWithOwner('Acme');
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: uniquePhone() });
      const client = await signedIn(owner.email);
      const pages = [
        '/operator',
        '/operator/accounts',
        `/operator/accounts/${account.id}`,
        '/operator/users',
        '/operator/numbers',
        `/operator/numbers/${number.id}`,
        '/operator/cluster',
        '/operator/system',
        '/operator/tokens',
        '/operator/audit',
      ];
      for (const page of pages) {
        const response = await client.get(page);
        assert.equal(response.statusCode, 403, page);
        assert.match(response.body, /your user is not an operator/);
      }
      await client.get('/');
      const actions: Array<[string, Record<string, string>]> = [
        ['/operator/accounts', { name: 'Sneaky', plan: 'enterprise' }],
        [`/operator/accounts/${account.id}/plan`, { plan: 'enterprise', custom_monthly_limit: '' }],
        [`/operator/accounts/${account.id}/users`, { email: 'sneaky@acme.test', role: 'owner', password: 'a long new password' }],
        [`/operator/accounts/${account.id}/numbers`, { phone: uniquePhone(), engine: 'sandbox' }],
        ['/operator/users', { email: 'sneaky2@acme.test', account_id: 'none', is_operator: 'true', password: 'a long new password' }],
        [`/operator/users/${owner.id}/reset-password`, {}],
        [`/operator/users/${owner.id}/operator`, { operator: 'true' }],
        [`/operator/numbers/${number.id}/reassign`, { account_id: account.id }],
        [`/operator/numbers/${number.id}/status`, { status: 'failed' }],
        [`/operator/numbers/${number.id}/remove`, {}],
        ['/operator/tokens', { name: 'sneaky token' }],
      ];
      for (const [action, fields] of actions) {
        const response = await client.post(action, fields);
        assert.equal(response.statusCode, 403, action);
        assert.match(response.body, /your user is not an operator/);
      }
      assert.equal((await test.gateway.accounts.getAccount(account.id)).plan, 'starter');
      assert.equal((await test.gateway.accounts.listUsers(accountScope(account.id))).length, 1);
      assert.equal((await test.gateway.accounts.getUser(owner.id)).isOperator, false);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).status, 'connected');
      assert.equal((await test.gateway.numbers.listNumbers(accountScope(account.id))).length, 1);
      assert.ok(!(await test.gateway.accounts.listAccounts()).some((each) => each.name === 'Sneaky'));
      assert.ok(!(await test.gateway.operatorTokens.list()).some((token) => token.name === 'sneaky token'));
      assert.equal((await new DashboardClient(test).get('/operator/users')).statusCode, 303, 'a visitor is sent to sign in');
    });

    it('sends /operator to the accounts list and shows the console navigation on every page', async () => {
      const redirect = await operator.get('/operator');
      assert.equal(redirect.statusCode, 303);
      assert.equal(redirect.headers.location, '/operator/accounts');
      for (const page of ['/operator/accounts', '/operator/users', '/operator/numbers', '/operator/system']) {
        const response = await operator.get(page);
        assert.equal(response.statusCode, 200, page);
        assert.match(response.body, /<nav class="subnav actions" aria-label="Operator console">/);
        assert.ok(response.body.includes(`href="${page}" class="button small" aria-current="page"`), `${page} is marked current`);
      }
    });

    it('makes an operator token, shown once, and revokes it: both audit rows name the operator, and a revoked token is refused', async () => {
      const page = await operator.get('/operator/tokens');
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes('href="/operator/tokens" class="button small" aria-current="page"'));

      const name = `<b>script</b> ${++counter}`;
      const created = await operator.submit('/operator/tokens', '/operator/tokens', { name });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.headers['cache-control'], 'no-store');
      const value = revealed(created.body, 'created-token');
      assert.match(value ?? '', /^wagw_op_[0-9a-f]{64}$/);
      // The name is text in the table (escaped), and inside quoted attributes only where it is quoted.
      assert.match(created.body, /<td>&lt;b>script&lt;\/b> \d+<\/td>/);
      assert.doesNotMatch(created.body.replace(/"[^"]*"/g, '""'), /<b>script<\/b>/, 'no element is made of the name');
      const token = await test.gateway.operatorTokens.authenticate(`Bearer ${value}`);
      assert.equal(token.name, name);
      const list = await operator.get('/operator/tokens');
      assert.ok(!list.body.includes(value!), 'the token is not shown again');
      assert.ok(list.body.includes(token.hint));

      const revoked = await operator.post(`/operator/tokens/${token.id}/revoke`, {});
      assert.equal(revoked.statusCode, 303);
      await assert.rejects(test.gateway.operatorTokens.authenticate(`Bearer ${value}`), /operator token|invalid|revoked/i);
      const audit = await test.gateway.audit.list(operatorScope(), { accountId: null, limit: 500 });
      const rows = audit.filter((event) => event.targetId === token.id);
      assert.deepEqual(rows.map((event) => event.action).sort(), ['operator_token.created', 'operator_token.revoked']);
      for (const row of rows) assert.deepEqual([row.actor.kind, row.actor.id, row.accountId], ['user', operatorUser.id, null]);
    });

    it("shows the audit log, every account's or one's, naming the key, how and from where, escaped", async () => {
      const { account } = await createAccountWithOwner('Audited');
      const { account: elsewhere } = await createAccountWithOwner('Elsewhere');
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: uniquePhone() });
      const theirs = await test.gateway.numbers.addNumber(operatorScope(), { accountId: elsewhere.id, phone: uniquePhone() }, CLI_ACTOR);
      const key = await test.gateway.apiKeys.createKey({ accountId: account.id, name: '<i>script</i>' });
      const changed = await test.inject({
        method: 'PATCH',
        url: `/numbers/${number.id}`,
        payload: { auto_read: true },
        headers: { authorization: `Bearer ${key.plaintext}` },
      });
      assert.equal(changed.statusCode, 200, changed.body);

      const row = (body: string, target: string) => new RegExp(`<tr>(?:(?!</tr>).)*${target}(?:(?!</tr>).)*</tr>`, 's').exec(body)?.[0];
      const all = await operator.get('/operator/audit');
      assert.equal(all.statusCode, 200);
      const settings = row(all.body, number.id) ?? '';
      for (const shown of ['number.settings_changed', 'API key', '127.0.0.1', `&lt;i>script&lt;/i> (${key.apiKey.hint})`, 'Audited'])
        assert.ok(settings.includes(shown), `${shown} in ${settings}`);
      assert.doesNotMatch(all.body, /<i>script<\/i>/, 'the key name is text, not markup');
      const added = row(all.body, theirs.id) ?? '';
      assert.ok(added.includes('number.added') && added.includes('CLI') && added.includes('Elsewhere'), added);

      const one = await operator.get(`/operator/audit?account=${account.id}`);
      assert.ok(row(one.body, number.id)?.includes('number.settings_changed'));
      assert.equal(row(one.body, theirs.id), undefined, "another account's rows are not shown");
    });

    it('refuses a blank operator token name with 400, keeping the page, and makes nothing', async () => {
      const before = (await test.gateway.operatorTokens.list()).length;
      const refused = await operator.submit('/operator/tokens', '/operator/tokens', { name: '   ' });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /role="alert">A token&#39;s name is 1 to 100 characters\./);
      assert.equal((await test.gateway.operatorTokens.list()).length, before);
    });

    it('creates an account, its owner and a sandbox number through the forms', async () => {
      const list = await operator.get('/operator/accounts');
      assert.match(list.body, /<label for="account-name">Account name<\/label>/);
      assert.match(list.body, /Pro — 60,000 messages a month/);
      const created = await operator.post('/operator/accounts', { name: 'Gamma Ltd', plan: 'pro' });
      assert.equal(created.statusCode, 303);
      const accountPath = String(created.headers.location);
      const accountId = accountPath.replace('/operator/accounts/', '');
      const account = await test.gateway.accounts.getAccount(accountId);
      assert.equal(account.name, 'Gamma Ltd');
      assert.equal(account.plan, 'pro');

      const page = await operator.get(accountPath);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /The account is created\./);
      assert.match(page.body, /<option value="owner" selected>/, 'the first user is suggested as owner');

      const ownerEmail = email('gamma-owner');
      const withGenerated = await operator.post(`${accountPath}/users`, { email: ownerEmail, role: 'owner', password: '' });
      assert.equal(withGenerated.statusCode, 201);
      const generated = revealed(withGenerated.body, 'generated-password');
      assert.ok(generated !== undefined && generated.length >= 12, 'the generated password is shown');
      const ownerClient = await signedIn(ownerEmail, generated);
      assert.match((await ownerClient.get('/')).body, /Gamma Ltd/);
      const users = await test.gateway.accounts.listUsers(accountScope(accountId));
      assert.deepEqual(
        users.map((user) => [user.email, user.role]),
        [[ownerEmail, 'owner']],
      );

      const withPassword = await operator.submit(accountPath, `${accountPath}/users`, {
        email: email('gamma-member'),
        role: 'member',
        password: 'a long chosen password',
      });
      assert.equal(withPassword.statusCode, 303);
      assert.match((await operator.get(accountPath)).body, /The user is created\.[\s\S]*<option value="member" selected>/);

      const phone = uniquePhone();
      const added = await operator.post(`${accountPath}/numbers`, { phone, engine: 'sandbox' });
      assert.equal(added.statusCode, 303);
      const numbers = await test.gateway.numbers.listNumbers(accountScope(accountId));
      assert.deepEqual(
        numbers.map((number) => [number.phone, number.engine, number.status]),
        [[phone, 'sandbox', 'connected']],
      );
      assert.match((await operator.get(accountPath)).body, /The number is added\./);
    });

    it('keeps what was typed when an account form fails, and saves a plan with a custom limit', async () => {
      const { account } = await createAccountWithOwner('Delta');
      const accountPath = `/operator/accounts/${account.id}`;
      await operator.get(accountPath);
      const badPhone = await operator.post(`${accountPath}/numbers`, { phone: '12', engine: 'sandbox' });
      assert.equal(badPhone.statusCode, 400);
      assert.match(badPhone.body, /is not a valid international phone number/);
      assert.match(badPhone.body, /id="number-phone"[^>]*value="12"/);
      const duplicate = await operator.post(`${accountPath}/users`, { email: operatorUser.email, role: 'member', password: '' });
      assert.equal(duplicate.statusCode, 409);
      assert.equal((await test.gateway.numbers.listNumbers(accountScope(account.id))).length, 0);
      // A real WhatsApp number starts out connecting; it waits to be linked and opens no socket.
      const baileys = await operator.post(`${accountPath}/numbers`, { phone: uniquePhone(), engine: 'baileys' });
      assert.equal(baileys.statusCode, 303);
      const [added] = await test.gateway.numbers.listNumbers(accountScope(account.id));
      assert.equal(added?.engine, 'baileys');
      assert.equal(added?.status, 'connecting');

      const saved = await operator.post(`${accountPath}/plan`, { plan: 'enterprise', custom_monthly_limit: '500' });
      assert.equal(saved.statusCode, 303);
      let updated = await test.gateway.accounts.getAccount(account.id);
      assert.deepEqual([updated.plan, updated.customMonthlyLimit], ['enterprise', 500]);
      assert.match((await operator.get(accountPath)).body, /500 \(custom\)/);
      const badLimit = await operator.post(`${accountPath}/plan`, { plan: 'starter', custom_monthly_limit: 'lots' });
      assert.equal(badLimit.statusCode, 400);
      assert.match(badLimit.body, /must be a whole number/);
      assert.equal((await test.gateway.accounts.getAccount(account.id)).plan, 'enterprise');
      assert.equal((await operator.post(`${accountPath}/plan`, { plan: 'starter', custom_monthly_limit: '' })).statusCode, 303);
      updated = await test.gateway.accounts.getAccount(account.id);
      assert.deepEqual([updated.plan, updated.customMonthlyLimit], ['starter', null]);
      assert.equal((await operator.get('/operator/accounts/acc_missing')).statusCode, 404);
    });

    it('resets a password: the new one signs in, the old one fails, and existing sessions end', async () => {
      const { owner } = await createAccountWithOwner('Epsilon');
      const ownerClient = await signedIn(owner.email);
      await operator.get('/operator/users');
      const reset = await operator.post(`/operator/users/${owner.id}/reset-password`, {});
      assert.equal(reset.statusCode, 200);
      assert.ok(reset.body.includes(`New password for ${owner.email}`));
      const newPassword = revealed(reset.body, 'reset-password');
      assert.ok(newPassword !== undefined && newPassword.length >= 12);
      assert.equal((await ownerClient.get('/')).statusCode, 303, 'the old session is ended');
      assert.equal((await new DashboardClient(test).signIn(owner.email, PASSWORD)).statusCode, 401);
      await signedIn(owner.email, newPassword);
      const [row] = await test.gateway.audit.list(operatorScope(), { accountId: owner.accountId, limit: 1 });
      assert.deepEqual(
        [row?.action, row?.targetId, row?.actor.kind, row?.actor.id, row?.details],
        ['user.password_reset', owner.id, 'user', operatorUser.id, { email: owner.email }],
        'an audit row names the operator, never the password',
      );
    });

    it('makes and removes operators, but not oneself', async () => {
      const { owner } = await createAccountWithOwner('Zeta');
      await operator.get('/operator/users');
      const made = await operator.post(`/operator/users/${owner.id}/operator`, { operator: 'true' });
      assert.equal(made.statusCode, 303);
      assert.equal((await test.gateway.accounts.getUser(owner.id)).isOperator, true);
      const page = await operator.get('/operator/users');
      assert.match(page.body, /Operator rights are changed\./);
      assert.equal((await (await signedIn(owner.email)).get('/operator/system')).statusCode, 200, 'the new operator opens the console');
      const removed = await operator.post(`/operator/users/${owner.id}/operator`, { operator: 'false' });
      assert.equal(removed.statusCode, 303);
      assert.equal((await test.gateway.accounts.getUser(owner.id)).isOperator, false);
      const self = await operator.post(`/operator/users/${operatorUser.id}/operator`, { operator: 'false' });
      assert.equal(self.statusCode, 400);
      assert.match(self.body, /cannot remove your own operator rights/);
      assert.equal((await test.gateway.accounts.getUser(operatorUser.id)).isOperator, true);
      const rows = await test.gateway.audit.list(operatorScope(), { accountId: owner.accountId, limit: 2 });
      assert.deepEqual(
        rows.map((row) => [row.action, row.actor.id, row.details?.is_operator]),
        [
          ['user.operator_changed', operatorUser.id, false],
          ['user.operator_changed', operatorUser.id, true],
        ],
      );
    });

    it('creates users from the users page; a user without an account must be an operator', async () => {
      const { account } = await createAccountWithOwner('Eta');
      await operator.get('/operator/users');
      const lonely = email('lonely');
      const refused = await operator.post('/operator/users', { email: lonely, account_id: 'none', role: 'member', password: '' });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /needs an account, unless the user is an operator/);
      assert.ok(refused.body.includes(`value="${lonely}"`), 'the email typed is kept');
      const opCreated = await operator.post('/operator/users', { email: lonely, account_id: 'none', is_operator: 'true', password: '' });
      assert.equal(opCreated.statusCode, 201);
      assert.ok(revealed(opCreated.body, 'generated-password'));
      const users = await test.gateway.accounts.listUsers(operatorScope());
      const lonelyUser = users.find((user) => user.email === lonely);
      assert.deepEqual([lonelyUser?.accountId, lonelyUser?.isOperator], [null, true]);

      const member = email('member');
      const memberCreated = await operator.post('/operator/users', {
        email: member,
        account_id: account.id,
        role: 'admin',
        password: 'a long chosen password',
      });
      assert.equal(memberCreated.statusCode, 303);
      const created = (await test.gateway.accounts.listUsers(accountScope(account.id))).find((user) => user.email === member);
      assert.deepEqual([created?.role, created?.isOperator], ['admin', false]);
    });

    it('reassigns, sets the simulated status of and removes numbers; a number has its linking panel', async () => {
      const from = await createAccountWithOwner('Theta');
      const to = await createAccountWithOwner('Iota');
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId: from.account.id, phone: uniquePhone() });
      const listing = await operator.get('/operator/numbers');
      assert.match(listing.body, new RegExp(`data-number-status="${number.id}"`));
      assert.ok(listing.body.includes(`action="/operator/numbers/${number.id}/status"`), 'sandbox numbers offer Set status');

      const moved = await operator.post(`/operator/numbers/${number.id}/reassign`, { account_id: to.account.id });
      assert.equal(moved.statusCode, 303);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).accountId, to.account.id);
      const nowhere = await operator.post(`/operator/numbers/${number.id}/reassign`, { account_id: 'acc_missing' });
      assert.equal(nowhere.statusCode, 404);

      await operator.get('/operator/numbers');
      const outage = await operator.post(`/operator/numbers/${number.id}/status`, { status: 'disconnected' });
      assert.equal(outage.statusCode, 303);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).status, 'disconnected');
      // Setting the status it already has is no management action: no second row.
      await operator.get('/operator/numbers');
      const again = await operator.post(`/operator/numbers/${number.id}/status`, { status: 'disconnected' });
      assert.equal(again.statusCode, 303);
      const simulated = (await test.gateway.audit.list(operatorScope(), { accountId: to.account.id, limit: 20 })).filter(
        (row) => row.action === 'number.status_simulated',
      );
      assert.deepEqual(
        simulated.map((row) => [row.targetId, row.actor.kind, row.actor.label, row.actor.address, row.details?.status]),
        [[number.id, 'user', 'op@operator-test.test', '127.0.0.1', 'disconnected']],
        'the rehearsed outage is an audit row naming the operator',
      );

      const page = await operator.get(`/operator/numbers/${number.id}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /id="link-panel"/);
      assert.match(page.body, /Sandbox numbers are connected at once; there is nothing to link\./);
      assert.ok(page.body.includes('Iota'));

      const removed = await operator.post(`/operator/numbers/${number.id}/remove`, {});
      assert.equal(removed.statusCode, 303);
      await assert.rejects(test.gateway.numbers.findNumber(operatorScope(), number.id), /There is no number/);
      assert.match((await operator.get('/operator/numbers')).body, /The number is removed\./);
      assert.equal((await operator.get(`/operator/numbers/${number.id}`)).statusCode, 404);
    });

    it('shows the version, uptime, the database dialect and the counts on the system page', async () => {
      const status = await test.gateway.system.status();
      const page = await operator.get('/operator/system');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, dialect === 'postgres' ? /PostgreSQL \(postgres\)/ : /SQLite \(sqlite\)/);
      assert.ok(page.body.includes(`<dd>${status.version}</dd>`));
      assert.match(page.body, /<dt>Up for<\/dt>\s*<dd>(\d+ \w+|less than a second)/);
      assert.match(page.body, new RegExp(`<dt>Accounts</dt>\\s*<dd>${status.counts.accounts}</dd>`));
      assert.match(page.body, new RegExp(`<dt>Users</dt>\\s*<dd>${status.counts.users}</dd>`));
      assert.doesNotMatch(page.body, /postgres:\/\/[^"<]*:[^*"<@]+@/, 'no database password is shown');
    });

    it('shows the cluster: this node, its numbers, and the recent changes of owner, escaped', async () => {
      const { account } = await createAccountWithOwner('Cluster');
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: uniquePhone() });
      // A node whose name is markup (WAGW_NODE_NAME is free text) holding nothing.
      const odd = new LeaseKeeper(
        test.gateway.store,
        {
          ttlMs: 15_000,
          maxSessions: null,
          nodeName: '<script>alert(1)</script>',
          nodeUrl: null,
          drainMs: 1_000,
          sessionStartsPerSecond: 4,
        },
        test.gateway.logger,
      );
      await odd.startPinned([]);
      const page = await operator.get('/operator/cluster');
      await odd.stop();
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h1[^>]*>Cluster<\/h1>/);
      assert.ok(page.body.includes(test.gateway.keeper.nodeId), 'this node is listed by its id');
      assert.match(page.body, /\(this node\)/);
      assert.ok(page.body.includes(number.phone), 'with the numbers it owns');
      assert.match(page.body, /claimed/, 'and the claim among the recent changes of owner');
      assert.ok(page.body.includes('&lt;script>alert(1)&lt;/script>'), 'the node name is escaped');
      assert.ok(!page.body.includes('<script>alert(1)'));
      assert.match(page.body, /<h2 id="tasks-heading">Periodic tasks<\/h2>/);
      for (const task of test.gateway.scheduler.list())
        assert.ok(page.body.includes(`>${task.name}</td>`), `this node's task ${task.name} is listed`);
      assert.match(page.body, /Did not answer with its tasks/, 'a live node with no address is listed without its tasks');
    });
  });
}
