import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { findApiKeyById } from '../../../src/store/repositories/api-keys.ts';
import * as apiKeyScopesMigration from '../../../src/store/migrations/0024-api-key-scopes.ts';
import { newId } from '../../../src/domain/ids.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { createTestUser } from '../../support/users.ts';

/**
 * Scopes on API keys (docs/adr/0052-api-key-scopes.md): a key made as before does all it did,
 * a narrower key is refused what its scopes do not cover with 403 missing_scope naming the
 * scope, before its body is read, and keys that existed before scopes keep their powers.
 */
for (const dialect of dialects) {
  describe(`API key scopes (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let readOnlyKey: string;
    let webhooksKey: string;

    const get = (url: string, key: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    const makeKey = async (scopes: string[]) =>
      (await test.gateway.apiKeys.createKey({ accountId: account.accountId, name: scopes.join('+'), scopes })).plaintext;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway, { numbers: 1 });
      readOnlyKey = await makeKey(['read']);
      webhooksKey = await makeKey(['webhooks']);
    });
    after(() => test.close());

    it('a key made without naming scopes has read and send, and still sends and reads', async () => {
      const key = await findApiKeyById(test.gateway.store.db, account.apiKeyId);
      assert.deepEqual(key?.scopes, ['read', 'send']);
      const sent = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', message: 'hi' },
        account.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal((await get('/messages', account.apiKey)).statusCode, 200);
    });

    it('a read-only key reads messages, numbers, chats and contacts, and is refused a send at both paths, naming the scope', async () => {
      const from = encodeURIComponent(account.phones[0]!);
      for (const url of ['/messages', '/api/numbers', `/chats?from_phone=${from}`, `/contacts?from_phone=${from}`]) {
        const answer = await get(url, readOnlyKey);
        assert.equal(answer.statusCode, 200, `${url}: ${answer.body}`);
      }
      for (const path of ['/send_message', '/api/send_message']) {
        const refused = await test.post(path, { from_phone: account.phones[0], to_phone: '+14155550100', message: 'no' }, readOnlyKey);
        assert.equal(refused.statusCode, 403);
        const body = refused.json();
        assert.equal(body.error, 'missing_scope');
        assert.match(body.message, /lacks the send scope/);
        assert.deepEqual(body.meta, { required_scope: 'send', key_scopes: ['read'] });
        assert.equal(body.details, 'required_scope: send; key_scopes: read');
        assert.equal(typeof body.request_id, 'string');
      }
      const stored = await test.gateway.store.db.selectFrom('messages').select('id').where('text', '=', 'no').execute();
      assert.equal(stored.length, 0, 'nothing refused was stored');
    });

    it('the scope is checked before the body: a narrow key sending a broken body is told of the scope, not the body', async () => {
      const refused = await test.post('/send_message', '{"not json', readOnlyKey);
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().error, 'missing_scope');
    });

    it('an unknown key is still a 401, ahead of any scope', async () => {
      const refused = await get('/messages', `wagw_live_sk_${'0'.repeat(64)}`);
      assert.equal(refused.statusCode, 401);
    });

    it('a key with only the webhooks scope is refused reads and media, naming read or send', async () => {
      const read = await get('/messages', webhooksKey);
      assert.equal(read.statusCode, 403);
      assert.deepEqual(read.json().meta, { required_scope: 'read', key_scopes: ['webhooks'] });
      const upload = await test.inject({
        method: 'POST',
        url: '/media',
        headers: { authorization: `Bearer ${webhooksKey}`, 'content-type': 'text/plain' },
        payload: 'hello',
      });
      assert.equal(upload.statusCode, 403);
      assert.equal(upload.json().meta.required_scope, 'send');
      const download = await get('/api/media/med_unknown', webhooksKey);
      assert.equal(download.statusCode, 403);
      assert.equal(download.json().meta.required_scope, 'read');
    });

    it('an unknown or empty list of scopes is refused when a key is made, and nothing is stored', async () => {
      const before = (await test.gateway.apiKeys.listKeys(account.accountId)).length;
      await assert.rejects(makeKey(['read', 'admin']), { code: 'invalid_argument', message: /Unknown API key scope admin/ });
      await assert.rejects(makeKey([]), { code: 'invalid_argument', message: /at least one scope/ });
      assert.equal((await test.gateway.apiKeys.listKeys(account.accountId)).length, before);
    });

    it("the document states every operation's scope, as the bearer scheme's role and as x-required-scope", async () => {
      const document = (await test.inject({ method: 'GET', url: '/openapi.json' })).json();
      let operations = 0;
      const responses = document.components.responses as Record<string, unknown>;
      const resolved = (response: { $ref?: string }) =>
        response.$ref === undefined ? response : responses[response.$ref.split('/').pop()!];
      type DocumentedOperation = { security?: unknown; 'x-required-scope'?: string; responses: Record<string, { $ref?: string }> };
      for (const [path, methods] of Object.entries<Record<string, DocumentedOperation>>(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          if (!Array.isArray(operation.security) || !JSON.stringify(operation.security).includes('apiKey')) continue;
          operations += 1;
          const scope = operation['x-required-scope'];
          assert.ok(scope === 'read' || scope === 'send' || scope === 'webhooks', `${method} ${path} states its scope`);
          assert.deepEqual(operation.security, [{ apiKey: [scope] }], `${method} ${path}`);
          assert.ok(
            JSON.stringify(resolved(operation.responses['403'] ?? {})).includes('missing_scope'),
            `${method} ${path} lists missing_scope`,
          );
        }
      }
      assert.ok(operations > 80, `every keyed operation was checked (${operations})`);
      assert.equal(document.paths['/send_message'].post['x-required-scope'], 'send');
      assert.equal(document.paths['/messages'].get['x-required-scope'], 'read');
    });

    it('the dashboard makes a key with the scopes ticked, lists them, and refuses a key with none', async () => {
      await createTestUser(test.gateway, {
        accountId: account.accountId,
        email: 'scopes-owner@acme.test',
        password: 'correct horse battery',
        role: 'owner',
      });
      const owner = new DashboardClient(test);
      assert.equal((await owner.signIn('scopes-owner@acme.test', 'correct horse battery')).statusCode, 303);
      const page = await owner.get('/keys');
      assert.match(page.body, /<input id="key-scope-read" type="checkbox" name="scopes" value="read" checked/);
      assert.match(page.body, /<input id="key-scope-webhooks" type="checkbox" name="scopes" value="webhooks"\s*\/?>/);
      const created = await owner.post('/keys', { name: 'hooks only', scopes: ['webhooks'] });
      assert.equal(created.statusCode, 201);
      const made = (await test.gateway.apiKeys.listKeys(account.accountId)).find((key) => key.name === 'hooks only');
      assert.deepEqual(made?.scopes, ['webhooks']);
      assert.match((await owner.get('/keys')).body, /<td>webhooks<\/td>/);
      await owner.get('/keys');
      const none = await owner.post('/keys', { name: 'nothing' });
      assert.equal(none.statusCode, 400);
      assert.match(none.body, /at least one scope/);
    });
  });

  describe(`migration 0024-api-key-scopes (${dialect})`, () => {
    let test: TestGateway;
    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test.close());

    it('a key that existed before scopes gets read and send, exactly what it could do', async () => {
      // The migration speaks to any schema; the store's handle is typed with today's.
      const db = test.gateway.store.db as unknown as Kysely<unknown>;
      const account = await test.gateway.accounts.createAccount({ name: 'Old' });
      await apiKeyScopesMigration.down(db);
      const id = newId('apiKey');
      await sql`insert into api_keys (id, account_id, name, key_hash, hint, created_at) values (${id}, ${account.id}, 'old', ${'ab'.repeat(32)}, 'wagw_live_sk_…abcd', 1)`.execute(
        db,
      );
      await apiKeyScopesMigration.up(db);
      assert.deepEqual((await findApiKeyById(test.gateway.store.db, id))?.scopes, ['read', 'send']);
    });
  });
}
