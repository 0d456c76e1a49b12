import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertAcceptablePassword, MINIMUM_PASSWORD_SCORE } from '../../../src/accounts/password-policy.ts';
import { AppError } from '../../../src/domain/errors.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { runCli } from '../../support/run-cli.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

const STRONG = 'pale orbit cactus forty';
const WEAK = ['            ', 'password1234', 'qwertyuiop12', 'aaaaaaaaaaaaaa', '123456789012'];

function weakPassword(error: unknown): boolean {
  assert.ok(error instanceof AppError, String(error));
  assert.equal(error.code, 'weak_password', error.message);
  assert.deepEqual(Object.keys(error.meta as object).sort(), ['field', 'minimum_score', 'score']);
  return true;
}

describe('the password policy', () => {
  it('refuses twelve spaces and other guessable passwords, saying why', async () => {
    for (const password of WEAK) {
      await assert.rejects(
        assertAcceptablePassword(password),
        (error: unknown) => {
          weakPassword(error);
          assert.match((error as AppError).message, /^This password is too easy to guess\. \S/);
          assert.ok(((error as AppError).meta as { score: number }).score < MINIMUM_PASSWORD_SCORE);
          return true;
        },
        JSON.stringify(password),
      );
    }
  });

  it("refuses a password made of the user's own email", async () => {
    await assert.doesNotReject(assertAcceptablePassword('marguerite.lindqvist'));
    await assert.rejects(assertAcceptablePassword('marguerite.lindqvist', ['marguerite.lindqvist@example.test']), weakPassword);
  });

  it('refuses a short password by its length, and accepts a strong one', async () => {
    await assert.rejects(assertAcceptablePassword('Xq7!vR2#'), { code: 'weak_password', message: /at least 12 characters/ });
    await assert.doesNotReject(assertAcceptablePassword(STRONG));
  });
});

for (const dialect of dialects) {
  describe(`every form that sets a password applies the policy (${dialect})`, () => {
    let test: TestGateway;
    let accountId: string;

    before(async () => {
      test = await startTestGateway(dialect);
      accountId = (await test.gateway.accounts.createAccount({ name: 'Policy', plan: 'pro' })).id;
    });
    after(() => test?.close());

    it('first start: a weak WAGW_ADMIN_PASSWORD makes no operator', async () => {
      const fresh = await startTestGateway(dialect);
      try {
        await assert.rejects(fresh.gateway.accounts.ensureOperator('admin@policy.test', '            '), (error: unknown) => {
          assert.match((error as Error).message, /^WAGW_ADMIN_PASSWORD: /, 'the refusal names the setting');
          return weakPassword(error);
        });
        assert.equal((await fresh.gateway.accounts.ensureOperator('admin@policy.test', STRONG))?.user.email, 'admin@policy.test');
      } finally {
        await fresh.close();
      }
    });

    it('the CLI: user create --password refuses a weak one with the reason, and creates nothing', async () => {
      const run = await runCli(test.database.url, [
        'user',
        'create',
        '--email',
        'cli@policy.test',
        '--operator',
        '--password',
        '            ',
      ]);
      assert.notEqual(run.exitCode, 0);
      assert.match(run.stderr, /too easy to guess/);
      const users = await test.gateway.accounts.listUsers(operatorScope());
      assert.ok(!users.some((user) => user.email === 'cli@policy.test'), 'no user was made');
    });

    it('the console, an invite and a change of password refuse a weak password beside the form', async () => {
      await test.gateway.accounts.createUser({
        email: 'ops@policy.test',
        accountId: null,
        password: STRONG,
        isOperator: true,
        role: 'admin',
      });
      const operator = new DashboardClient(test);
      await operator.signIn('ops@policy.test', STRONG);
      const created = await operator.submit('/operator/users', '/operator/users', {
        email: 'new@policy.test',
        account_id: accountId,
        role: 'member',
        password: '            ',
      });
      assert.equal(created.statusCode, 400);
      assert.match(created.body, /too easy to guess/);

      const { token } = await test.gateway.team.createInvite(
        accountId,
        'member',
        (await test.gateway.accounts.createUser({ accountId, email: 'owner@policy.test', password: STRONG, role: 'owner' })).user.id,
      );
      const visitor = new DashboardClient(test);
      await visitor.get(`/invite/${token}`);
      const joined = await visitor.post(`/invite/${token}`, { email: 'joiner@policy.test', password: 'password1234' });
      assert.equal(joined.statusCode, 400);
      assert.match(joined.body, /too easy to guess/);

      const owner = new DashboardClient(test);
      await owner.signIn('owner@policy.test', STRONG);
      const changed = await owner.submit('/account/password', '/account/password', {
        current_password: STRONG,
        new_password: 'qwertyuiop12',
      });
      assert.equal(changed.statusCode, 400);
      assert.match(changed.body, /too easy to guess/);
      assert.equal((await new DashboardClient(test).signIn('owner@policy.test', STRONG)).statusCode, 303, 'the old password still works');
    });
  });
}
