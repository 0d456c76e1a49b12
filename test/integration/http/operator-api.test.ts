import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { assertRefused, operatorCaller } from '../../support/operator-api.ts';

/**
 * The operator API (docs/operator-api.md): an operator token, made like an API key and revocable,
 * reads the audit log at /admin and /api/admin; anything else is refused with the documented
 * envelope. Revocation on another node is test/integration/cluster/operator-tokens.test.ts.
 */

for (const dialect of dialects) {
  describe(`the operator API (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;
    let token: string;
    let tokenId: string;

    const read = (url: string, bearer: string | undefined, extra: { payload?: string } = {}) =>
      test.inject({
        method: 'GET',
        url,
        headers: {
          ...(bearer !== undefined && { authorization: `Bearer ${bearer}` }),
          ...(extra.payload !== undefined && { 'content-type': 'application/json' }),
        },
        ...extra,
      });

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' });
      account = await seedAccount(test.gateway);
      other = await seedAccount(test.gateway);
      const made = await test.gateway.operatorTokens.create('provisioning script', CLI_ACTOR);
      token = made.plaintext;
      tokenId = made.token.id;
    });
    after(() => test?.close());

    it('a token is shown once, stored only as its hash, and named with a hint; its making is an audit row', async () => {
      assert.match(token, /^wagw_op_[0-9a-f]{64}$/);
      const row = await test.gateway.store.db.selectFrom('operator_tokens').selectAll().where('id', '=', tokenId).executeTakeFirstOrThrow();
      assert.ok(!Object.values(row).includes(token), 'the token itself is not stored');
      assert.equal(row.hint, `wagw_op_…${token.slice(-4)}`);
      const audit = await test.gateway.audit.list(operatorScope(), { accountId: null, limit: 500 });
      const made = audit.find((event) => event.targetId === tokenId);
      assert.deepEqual([made?.action, made?.actor.kind, made?.accountId], ['operator_token.created', 'cli', null]);
    });

    it('reads the audit log, newest first, of every account or of one, at both paths, naming the key or token that acted', async () => {
      const { plaintext: webhooksKey } = await test.gateway.apiKeys.createKey({
        accountId: account.accountId,
        name: 'hooks',
        scopes: ['webhooks'],
      });
      const created = await test.inject({
        method: 'POST',
        url: '/webhooks',
        headers: { authorization: `Bearer ${webhooksKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['message'] }),
      });
      assert.equal(created.statusCode, 201, created.body);
      for (const prefix of ['', '/api']) {
        const all = await read(`${prefix}/admin/audit_events?limit=500`, token);
        assert.equal(all.statusCode, 200, all.body);
        const events = all.json().events as {
          id: string;
          at: string;
          account_id: string | null;
          action: string;
          actor: { kind: string };
        }[];
        assert.ok(
          events.some((event) => event.account_id === other.accountId && event.action === 'api_key.created'),
          'every account',
        );
        assert.ok(
          events.some((event) => event.account_id === null && event.action === 'operator_token.created'),
          'the gateway as a whole',
        );
        const times = events.map((event) => Date.parse(event.at));
        assert.deepEqual(
          times,
          [...times].sort((a, b) => b - a),
          'newest first',
        );

        const one = await read(`${prefix}/admin/audit_events?account_id=${account.accountId}&limit=2`, token);
        assert.equal(one.statusCode, 200, one.body);
        const ones = one.json().events as { account_id: string; action: string }[];
        assert.ok(ones.length >= 1 && ones.length <= 2);
        assert.ok(
          ones.every((event) => event.account_id === account.accountId),
          "one account's rows only",
        );
      }
      const newest = (await read(`/admin/audit_events?account_id=${account.accountId}&limit=1`, token)).json().events[0];
      assert.deepEqual([newest.action, newest.actor.kind], ['webhook.created', 'api_key']);
    });

    it('refuses a call without a token, with an API key, with a malformed, unknown or revoked token, each 401 in the envelope', async () => {
      assertRefused(await read('/admin/audit_events', undefined), 401, 'missing_operator_token');
      assertRefused(await read('/admin/audit_events', account.apiKey), 401, 'invalid_operator_token');
      assertRefused(await read('/api/admin/audit_events', 'wagw_op_nothex'), 401, 'invalid_operator_token');
      assertRefused(await read('/admin/audit_events', `wagw_op_${'0'.repeat(64)}`), 401, 'invalid_operator_token');
      // …and a token is no API key.
      assertRefused(await read('/numbers', token), 401, 'invalid_api_key');

      const doomed = await test.gateway.operatorTokens.create('doomed', CLI_ACTOR);
      assert.equal((await read('/admin/audit_events?limit=1', doomed.plaintext)).statusCode, 200);
      await test.gateway.operatorTokens.revoke(doomed.token.id, CLI_ACTOR);
      assertRefused(await read('/admin/audit_events?limit=1', doomed.plaintext), 401, 'invalid_operator_token');
      const revoked = (await read('/admin/audit_events?limit=500', token))
        .json()
        .events.find(
          (event: { action: string; target_id: string }) =>
            event.action === 'operator_token.revoked' && event.target_id === doomed.token.id,
        );
      assert.equal(revoked?.actor.kind, 'cli');
      const listed = await test.gateway.operatorTokens.list();
      assert.ok(listed.find((each) => each.id === doomed.token.id)?.revokedAt instanceof Date);
    });

    it('refuses bad input with 400 invalid_request naming the parameter: a limit out of bounds, an unknown parameter, a body', async () => {
      assertRefused(await read('/admin/audit_events?limit=0', token), 400, 'invalid_request', 'limit');
      assertRefused(await read('/admin/audit_events?limit=501', token), 400, 'invalid_request', 'limit');
      assertRefused(await read('/admin/audit_events?limit=ten', token), 400, 'invalid_request', 'limit');
      assertRefused(await read('/admin/audit_events?accounts=1', token), 400, 'invalid_request', 'accounts');
      assertRefused(await read('/admin/audit_events', token, { payload: '{"limit":1}' }), 400, 'invalid_request', 'body');
    });

    const call = operatorCaller(
      () => test,
      () => token,
    );

    it('creates, reads, lists and changes accounts at both paths, each change an audit row naming the token', async () => {
      const created = await call('POST', '/admin/accounts', { name: 'Onboarded Co', plan: 'pro', monthly_limit: 5000 });
      assert.equal(created.statusCode, 201, created.body);
      const made = created.json();
      assert.deepEqual(
        { name: made.name, plan: made.plan, monthly_limit: made.monthly_limit, effective: made.effective_monthly_limit },
        { name: 'Onboarded Co', plan: 'pro', monthly_limit: 5000, effective: 5000 },
      );
      assert.equal((await call('GET', `/api/admin/accounts/${made.id}`)).json().name, 'Onboarded Co');
      assert.ok((await call('GET', '/admin/accounts')).json().accounts.some((each: { id: string }) => each.id === made.id));
      const changed = await call('PATCH', `/api/admin/accounts/${made.id}`, { plan: 'enterprise', monthly_limit: null });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.deepEqual([changed.json().plan, changed.json().monthly_limit], ['enterprise', null]);
      assert.equal((await test.gateway.accounts.getAccount(made.id)).plan, 'enterprise', 'the change is stored');

      const rows = (await read(`/admin/audit_events?account_id=${made.id}`, token)).json().events;
      assert.deepEqual(
        rows.map((row: { action: string; actor: { kind: string; id: string }; details: unknown }) => [
          row.action,
          row.actor.kind,
          row.actor.id,
          row.details,
        ]),
        [
          ['account.updated', 'operator_token', tokenId, { plan: 'enterprise', monthly_limit: null }],
          ['account.created', 'operator_token', tokenId, { name: 'Onboarded Co', plan: 'pro', monthly_limit: 5000 }],
        ],
      );
      assert.ok(rows.every((row: { actor: { label: string } }) => row.actor.label === `provisioning script (wagw_op_…${token.slice(-4)})`));
    });

    it('an unknown account is 404 account_not_found to every operation on one, and nothing is recorded', async () => {
      assertRefused(await call('GET', '/admin/accounts/acc_unknown'), 404, 'account_not_found');
      assertRefused(await call('PATCH', '/admin/accounts/acc_unknown', { plan: 'pro' }), 404, 'account_not_found');
      assert.equal((await read('/admin/audit_events?account_id=acc_unknown', token)).json().events.length, 0);
    });

    it('refuses bad account input with 400 invalid_request naming the field, and makes nothing', async () => {
      const before = (await test.gateway.accounts.listAccounts()).length;
      assertRefused(await call('POST', '/admin/accounts', {}), 400, 'invalid_request', 'name');
      assertRefused(await call('POST', '/admin/accounts', { name: '   ' }), 400, 'invalid_request', 'name');
      assertRefused(await call('POST', '/admin/accounts', { name: 'X', plan: 'gold' }), 400, 'invalid_request', 'plan');
      assertRefused(await call('POST', '/admin/accounts', { name: 'X', monthly_limit: -1 }), 400, 'invalid_request', 'monthly_limit');
      assertRefused(await call('POST', '/admin/accounts', { name: 'X', owner: 'me' }), 400, 'invalid_request', 'owner');
      assertRefused(await call('PATCH', `/admin/accounts/${account.accountId}`, {}), 400, 'invalid_request');
      assertRefused(await call('POST', '/admin/accounts', { name: 'X' }, account.apiKey), 401, 'invalid_operator_token');
      assert.equal((await test.gateway.accounts.listAccounts()).length, before);
    });

    it("makes, lists and revokes an account's API keys, the key shown once and working at once, each change an audit row", async () => {
      const made = await call('POST', `/api/admin/accounts/${account.accountId}/api_keys`, { name: 'onboarded', scopes: ['read'] });
      assert.equal(made.statusCode, 201, made.body);
      const key = made.json();
      assert.deepEqual([key.name, key.scopes, key.account_id, key.revoked_at], ['onboarded', ['read'], account.accountId, null]);
      assert.ok(key.key.endsWith(key.hint.slice(-4)), 'the key is shown, and its hint is its end');
      const numbers = await test.inject({ method: 'GET', url: '/numbers', headers: { authorization: `Bearer ${key.key}` } });
      assert.equal(numbers.statusCode, 200, 'the key works at once');
      const listed = (await call('GET', `/admin/accounts/${account.accountId}/api_keys`)).json().api_keys as {
        id: string;
        account_id: string;
        key?: string;
      }[];
      assert.ok(
        listed.some((each) => each.id === key.id && each.key === undefined),
        'listed, without the key',
      );
      assert.ok(
        listed.every((each) => each.account_id === account.accountId) && !listed.some((each) => each.id === other.apiKeyId),
        "the account's keys only: another account's key is not among them",
      );
      const revoked = await call('POST', `/admin/api_keys/${key.id}/revoke`, {});
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.equal(typeof revoked.json().revoked_at, 'string');
      const refused = await test.inject({ method: 'GET', url: '/numbers', headers: { authorization: `Bearer ${key.key}` } });
      assert.equal(refused.statusCode, 401);
      const rows = (await read(`/admin/audit_events?account_id=${account.accountId}&limit=2`, token)).json().events;
      assert.deepEqual(
        rows.map((row: { action: string; target_id: string; actor: { id: string } }) => [row.action, row.target_id, row.actor.id]),
        [
          ['api_key.revoked', key.id, tokenId],
          ['api_key.created', key.id, tokenId],
        ],
      );
    });

    it('refuses bad key input, an unknown account or key, and makes nothing', async () => {
      const before = (await test.gateway.apiKeys.listKeys(other.accountId)).length;
      assertRefused(await call('POST', `/admin/accounts/${other.accountId}/api_keys`, { scopes: [] }), 400, 'invalid_request', 'scopes');
      assertRefused(await call('POST', `/admin/accounts/${other.accountId}/api_keys`, { scopes: ['admin'] }), 400, 'invalid_request');
      assertRefused(
        await call('POST', `/admin/accounts/${other.accountId}/api_keys`, { name: 'x', owner: 1 }),
        400,
        'invalid_request',
        'owner',
      );
      assertRefused(await call('POST', '/admin/accounts/acc_unknown/api_keys', {}), 404, 'account_not_found');
      assertRefused(await call('GET', '/admin/accounts/acc_unknown/api_keys'), 404, 'account_not_found');
      assertRefused(await call('POST', '/admin/api_keys/key_unknown/revoke', {}), 404, 'api_key_not_found');
      assertRefused(await call('POST', `/admin/accounts/${other.accountId}/api_keys`, {}, other.apiKey), 401, 'invalid_operator_token');
      assert.equal((await test.gateway.apiKeys.listKeys(other.accountId)).length, before);
    });

    it('records when a token was last used', async () => {
      const used = await test.gateway.operatorTokens.create('last used', CLI_ACTOR);
      assert.equal(used.token.lastUsedAt, null);
      assert.equal((await read('/admin/audit_events?limit=1', used.plaintext)).statusCode, 200);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const found = (await test.gateway.operatorTokens.list()).find((each) => each.id === used.token.id);
        if (found?.lastUsedAt instanceof Date) break;
        assert.ok(Date.now() < deadline, 'last_used_at was written');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
  });
}
