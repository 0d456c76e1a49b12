import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyPassword } from '../../../src/accounts/passwords.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount } from '../../support/gateway.ts';
import { assertRefused, operatorApiWorld } from '../../support/operator-api.ts';
import { createTestUser } from '../../support/users.ts';

/**
 * An account's users over the operator API (docs/operator-api.md#users): added, read, given a
 * role, a new password, removed, each an audit row naming the token and never a password; a user
 * of another account is not found; bad input is refused in the documented envelope.
 */

const STRONG_PASSWORD = 'violet-Harbor-quantum-47-lantern';

interface UserBody {
  id: string;
  email: string;
  account_id: string;
  role: string;
  is_operator: boolean;
  password?: string;
}

let emails = 0;
const freshEmail = () => `person${++emails}.${Date.now()}@onboarded.test`;

for (const dialect of dialects) {
  describe(`an account's users over the operator API (${dialect})`, () => {
    const world = operatorApiWorld(dialect);
    const { call, auditOf } = world;
    const storedHash = async (userId: string) =>
      (await world.test.gateway.store.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow())
        .password_hash;

    it('adds a user with a password it never answers back, lists, reads, changes the role and removes it, each an audit row', async () => {
      const email = freshEmail();
      const created = await call('POST', `/api/admin/accounts/${world.account.accountId}/users`, {
        email: email.toUpperCase(),
        role: 'member',
        password: STRONG_PASSWORD,
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.ok(!created.body.includes(STRONG_PASSWORD), 'the password is not answered back');
      const user = created.json() as UserBody;
      assert.deepEqual(
        [user.email, user.role, user.account_id, user.is_operator, user.password],
        [email, 'member', world.account.accountId, false, undefined],
      );
      assert.ok(await verifyPassword(STRONG_PASSWORD, await storedHash(user.id)), 'the password given is the one stored');

      const listed = (await call('GET', `/admin/accounts/${world.account.accountId}/users`)).json().users as UserBody[];
      assert.ok(listed.some((each) => each.id === user.id && each.password === undefined));
      assert.equal((await call('GET', `/admin/accounts/${world.account.accountId}/users/${user.id}`)).json().email, email);

      const changed = await call('PATCH', `/admin/accounts/${world.account.accountId}/users/${user.id}`, { role: 'admin' });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.json().role, 'admin');
      assert.equal((await world.test.gateway.accounts.getUser(user.id)).role, 'admin', 'the role is stored');

      const removed = await call('DELETE', `/api/admin/accounts/${world.account.accountId}/users/${user.id}`);
      assert.equal(removed.statusCode, 200, removed.body);
      assert.equal(removed.json().id, user.id);
      assertRefused(await call('GET', `/admin/accounts/${world.account.accountId}/users/${user.id}`), 404, 'user_not_found');

      const rows = await auditOf(world.account.accountId, 3);
      assert.deepEqual(
        rows.map((row) => [row.action, row.target_id, row.actor.kind, row.actor.id, row.details]),
        [
          ['user.removed', user.id, 'operator_token', world.tokenId, { email, role: 'admin' }],
          ['user.role_changed', user.id, 'operator_token', world.tokenId, { email, from: 'member', to: 'admin' }],
          ['user.created', user.id, 'operator_token', world.tokenId, { email, role: 'member', is_operator: false }],
        ],
      );
    });

    it('generates a password when none is given and on a reset, shows it once, and records neither', async () => {
      const created = await call('POST', `/admin/accounts/${world.account.accountId}/users`, { email: freshEmail() });
      assert.equal(created.statusCode, 201, created.body);
      const user = created.json() as UserBody;
      assert.equal(user.role, 'member', 'member by default');
      assert.equal(typeof user.password, 'string');
      assert.ok(await verifyPassword(user.password!, await storedHash(user.id)), 'the generated password signs in');

      const reset = await call('POST', `/admin/accounts/${world.account.accountId}/users/${user.id}/reset_password`, {});
      assert.equal(reset.statusCode, 200, reset.body);
      const fresh = reset.json().password as string;
      assert.notEqual(fresh, user.password);
      assert.ok(!(await verifyPassword(user.password!, await storedHash(user.id))), 'the old password no longer signs in');

      const rows = await auditOf(world.account.accountId, 2);
      assert.deepEqual(
        rows.map((row) => [row.action, row.target_id, row.actor.id]),
        [
          ['user.password_reset', user.id, world.tokenId],
          ['user.created', user.id, world.tokenId],
        ],
      );
      const recorded = JSON.stringify(rows);
      assert.ok(!recorded.includes(user.password!) && !recorded.includes(fresh), 'no password in the audit log');
    });

    it("another account's user is 404 user_not_found to every operation on one, and nothing changes or is recorded", async () => {
      const theirs = (
        await createTestUser(world.test.gateway, {
          accountId: world.other.accountId,
          email: freshEmail(),
          password: STRONG_PASSWORD,
          role: 'owner',
        })
      ).user;
      const mine = `/admin/accounts/${world.account.accountId}/users/${theirs.id}`;
      const before = (await auditOf(world.account.accountId, 500)).length;
      assertRefused(await call('GET', mine), 404, 'user_not_found');
      assertRefused(await call('PATCH', mine, { role: 'member' }), 404, 'user_not_found');
      assertRefused(await call('POST', `${mine}/reset_password`, {}), 404, 'user_not_found');
      assertRefused(await call('DELETE', mine), 404, 'user_not_found');
      assert.ok(!(await call('GET', `/admin/accounts/${world.account.accountId}/users`)).body.includes(theirs.id), 'not listed');
      assert.deepEqual(await world.test.gateway.accounts.getUser(theirs.id), theirs, 'unchanged');
      assert.equal((await auditOf(world.account.accountId, 500)).length, before);
      assert.equal((await auditOf(world.other.accountId, 500)).filter((row) => row.target_id === theirs.id).length, 0);
      // An unknown account is its own 404, before the user is looked for.
      assertRefused(await call('GET', `/admin/accounts/acc_unknown/users/${theirs.id}`), 404, 'account_not_found');
      assertRefused(await call('GET', '/admin/accounts/acc_unknown/users'), 404, 'account_not_found');
      assertRefused(await call('POST', '/admin/accounts/acc_unknown/users', { email: freshEmail() }), 404, 'account_not_found');
    });

    it('refuses bad user input with the documented 4xx naming the field, and makes nothing', async () => {
      // An account of its own, whose only owner is the test's.
      const fresh = await seedAccount(world.test.gateway);
      const users = `/admin/accounts/${fresh.accountId}/users`;
      const before = (await call('GET', users)).json().users.length;
      assertRefused(await call('POST', users, {}), 400, 'invalid_request', 'email');
      assertRefused(await call('POST', users, { email: 'not an email' }), 400, 'invalid_request', 'email');
      assertRefused(await call('POST', users, { email: freshEmail(), role: 'god' }), 400, 'invalid_request', 'role');
      assertRefused(await call('POST', users, { email: freshEmail(), is_operator: true }), 400, 'invalid_request', 'is_operator');
      assertRefused(await call('POST', users, { email: freshEmail(), password: 'short' }), 400, 'weak_password', 'password');
      assertRefused(await call('POST', users, { email: freshEmail(), password: 'passwordpassword' }), 400, 'weak_password', 'password');
      const owner = (
        await createTestUser(world.test.gateway, {
          accountId: fresh.accountId,
          email: freshEmail(),
          password: STRONG_PASSWORD,
          role: 'owner',
        })
      ).user;
      assertRefused(await call('POST', users, { email: owner.email }), 409, 'email_already_registered');
      assertRefused(await call('PATCH', `${users}/${owner.id}`, {}), 400, 'invalid_request', 'role');
      assertRefused(await call('PATCH', `${users}/${owner.id}`, { role: 'admin', email: 'x@y.test' }), 400, 'invalid_request', 'email');
      assertRefused(await call('DELETE', `${users}/${owner.id}`, { force: true }), 400, 'invalid_request', 'body');
      assertRefused(
        await call('POST', `${users}/${owner.id}/reset_password`, { password: STRONG_PASSWORD }),
        400,
        'invalid_request',
        'password',
      );
      // The account's only owner stays one, and an operator of the gateway is not removed from here.
      assertRefused(await call('PATCH', `${users}/${owner.id}`, { role: 'member' }), 409, 'last_owner');
      assertRefused(await call('DELETE', `${users}/${owner.id}`), 409, 'last_owner');
      const operatorUser = (
        await createTestUser(world.test.gateway, {
          accountId: fresh.accountId,
          email: freshEmail(),
          password: STRONG_PASSWORD,
          isOperator: true,
        })
      ).user;
      assertRefused(await call('DELETE', `${users}/${operatorUser.id}`), 409, 'user_is_operator');
      assertRefused(await call('GET', users, undefined, world.account.apiKey), 401, 'invalid_operator_token');
      assert.equal((await call('GET', users)).json().users.length, before + 2, 'only the two made by the test');
    });
  });
}
