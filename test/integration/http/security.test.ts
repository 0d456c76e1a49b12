import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import { buildApp } from '../../../src/app.ts';
import { createGateway, createLogger } from '../../../src/main.ts';
import { findApiKeyById } from '../../../src/store/repositories/api-keys.ts';
import { dialects, type Dialect } from '../../support/databases.ts';
import { seedAccount, startTestGateway, withNumberOn, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

async function dumpEveryTable(test: TestGateway, dialect: Dialect): Promise<string> {
  const db = test.gateway.store.db;
  const tables =
    dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)).rows.map((row) => row.name)
      : (
          await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public'`.execute(db)
        ).rows.map((row) => row.name);
  assert.ok(tables.includes('api_keys') && tables.includes('messages'), `tables found: ${tables.join(', ')}`);
  let dump = '';
  for (const table of tables) {
    const rows = await sql`select * from ${sql.table(table)}`.execute(db);
    dump += JSON.stringify(rows.rows);
  }
  return dump;
}

for (const dialect of dialects) {
  describe(`keys, tenants and logs (${dialect})`, () => {
    let test: TestGateway;
    let caller: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      caller = await seedAccount(test.gateway);
    });
    after(() => test.close());

    const sendWith = (apiKey: string, fromPhone = caller.phones[0]) =>
      test.post('/send_message', { from_phone: fromPhone, to_phone: '+14155550100', message: 'hi' }, apiKey);

    it('the key never appears in the database, only its SHA-256', async () => {
      assert.equal((await sendWith(caller.apiKey)).statusCode, 200);
      const secret = caller.apiKey.slice(caller.apiKey.lastIndexOf('_') + 1);
      const dump = await dumpEveryTable(test, dialect);
      assert.ok(dump.includes(caller.apiKeyId), 'the dump does contain the key row');
      assert.ok(!dump.includes(caller.apiKey), 'the full key is stored');
      assert.ok(!dump.includes(secret), 'the secret part is stored');
      if (dialect === 'sqlite') {
        const file = test.database.url.slice('sqlite:'.length);
        for (const path of [file, `${file}-wal`]) {
          if (fs.existsSync(path)) assert.ok(!fs.readFileSync(path).includes(secret), `${path} holds the key's bytes`);
        }
      }
    });

    it('a revoked key is refused on the very next request', async () => {
      const created = await test.gateway.apiKeys.createKey({ accountId: caller.accountId, name: 'to revoke' });
      assert.equal((await sendWith(created.plaintext)).statusCode, 200);
      await test.gateway.apiKeys.revokeKey(operatorScope(), created.apiKey.id);
      const refused = await sendWith(created.plaintext);
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.json().error, 'invalid_api_key');
      assert.equal((await sendWith(caller.apiKey)).statusCode, 200, 'other keys of the account still work');
    });

    it('keys handed out keep working after WAGW_KEY_PREFIX changes; new keys take the new prefix', async () => {
      // A second gateway on the same database, restarted with another prefix.
      const config = loadConfig({
        DATABASE_URL: test.database.url,
        LOG_LEVEL: 'silent',
        WAGW_KEY_PREFIX: 'acme',
        WAGW_SECRET_KEY: '7e57'.repeat(16),
      });
      const renamed = await createGateway(config, createLogger(config));
      const app = await buildApp(renamed);
      try {
        const send = (key: string) =>
          app.inject({
            method: 'POST',
            url: '/send_message',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            payload: { from_phone: caller.phones[0], to_phone: '+14155550100', message: 'hi' },
          });
        assert.match(caller.apiKey, /^wagw_live_sk_/);
        await withNumberOn(test.gateway, renamed, caller.phones[0]!, async () => {
          assert.equal((await send(caller.apiKey)).statusCode, 200, 'the key made under the old prefix');
          const fresh = await renamed.apiKeys.createKey({ accountId: caller.accountId });
          assert.match(fresh.plaintext, /^acme_live_sk_/);
          assert.equal((await send(fresh.plaintext)).statusCode, 200);
        });
      } finally {
        await app.close();
        await renamed.close();
      }
    });

    it('any key of an account may send from any number of that account', async () => {
      const account = await seedAccount(test.gateway, { numbers: 2 });
      const second = await test.gateway.apiKeys.createKey({ accountId: account.accountId, name: 'second' });
      for (const key of [account.apiKey, second.plaintext]) {
        for (const phone of account.phones) assert.equal((await sendWith(key, phone)).statusCode, 200);
      }
    });

    it('a from_phone of another account gets 403, and no message is stored for it', async () => {
      const other = await seedAccount(test.gateway);
      const response = await sendWith(caller.apiKey, other.phones[0]);
      assert.equal(response.statusCode, 403);
      assert.equal(response.json().error, 'phone_not_owned');
      const dump = await dumpEveryTable(test, dialect);
      assert.ok(!dump.includes(`"from_phone":"${other.phones[0]}"`), "a message from the other account's number was stored");
    });

    it("an account cannot revoke another account's key", async () => {
      const other = await seedAccount(test.gateway);
      await assert.rejects(test.gateway.apiKeys.revokeKey(accountScope(caller.accountId), other.apiKeyId), { code: 'api_key_not_found' });
      assert.equal((await sendWith(other.apiKey, other.phones[0])).statusCode, 200);
    });

    it('last_used_at is recorded, and written at most once a minute', async () => {
      const account = await seedAccount(test.gateway);
      assert.equal((await sendWith(account.apiKey, account.phones[0])).statusCode, 200);
      let firstUse: Date | null = null;
      for (let attempt = 0; attempt < 50 && firstUse === null; attempt++) {
        firstUse = (await findApiKeyById(test.gateway.store.db, account.apiKeyId))!.lastUsedAt;
        if (firstUse === null) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(firstUse, 'last_used_at was written');
      await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal((await sendWith(account.apiKey, account.phones[0])).statusCode, 200);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const secondUse = (await findApiKeyById(test.gateway.store.db, account.apiKeyId))!.lastUsedAt;
      assert.equal(secondUse?.getTime(), firstUse.getTime(), 'the second request within a minute did not write again');
    });

    it('logs one line per request and never the key, the Authorization header or the body', async () => {
      test.logLines.length = 0;
      const response = await sendWith(caller.apiKey);
      assert.equal(response.statusCode, 200);
      await test.post('/send_message', { from_phone: 'x', to_phone: 'y', message: 'secret body text' }, caller.apiKey);
      const lines = test.logLines.map((line) => JSON.parse(line));
      const requestLines = lines.filter((line) => line.msg === 'request');
      assert.equal(requestLines.length, 2);
      assert.equal(requestLines[0].reqId, response.headers['x-request-id']);
      assert.equal(requestLines[0].status, 200);
      const everything = test.logLines.join('');
      assert.ok(!everything.includes(caller.apiKey.slice(-64)), 'the key was logged');
      assert.ok(!everything.includes('secret body text'), 'the body was logged');
    });

    it("a caller's own X-Request-Id is echoed when it is safe, replaced when it is not", async () => {
      const kept = await test.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-42.a' } });
      assert.equal(kept.headers['x-request-id'], 'trace-42.a');
      const replaced = await test.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad value<script>' } });
      assert.match(String(replaced.headers['x-request-id']), /^req_/);
    });
  });
}
