import { DEFAULT_API_KEY_SCOPES } from '../../../src/domain/api-key-scopes.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import { ApiKeyAuthenticator, VERIFIED_KEY_TTL_MS } from '../../../src/accounts/api-key-auth.ts';
import { loadConfig } from '../../../src/config.ts';
import { createGateway, createLogger } from '../../../src/main.ts';
import { generateApiKey } from '../../../src/domain/api-key.ts';
import { newId } from '../../../src/domain/ids.ts';
import { openStore } from '../../../src/store/database.ts';
import { insertApiKey, revokeApiKey } from '../../../src/store/repositories/api-keys.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

// Runs alone: its second gateway on the same SQLite file can meet the first's lock, and SQLite's busy wait then holds the whole process.

/** Holds every query's result until released, so a test can place a revocation inside a lookup. */
class ResultGate implements KyselyPlugin {
  private opened!: () => void;
  private readonly open = new Promise<void>((resolve) => (this.opened = resolve));
  transformQuery: KyselyPlugin['transformQuery'] = (args) => args.node;
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    await this.open;
    return args.result;
  }
  release(): void {
    this.opened();
  }
}

for (const dialect of dialects) {
  describe(`verified API keys are remembered briefly, never past a revocation (${dialect})`, () => {
    let test: TestGateway;
    let caller: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      caller = await seedAccount(test.gateway);
    });
    after(() => test.close());

    const sendWith = (apiKey: string) =>
      test.post('/send_message', { from_phone: caller.phones[0], to_phone: '+14155550100', message: 'hi' }, apiKey);

    it(`a key revoked by another process is refused within ${VERIFIED_KEY_TTL_MS} ms`, async () => {
      const created = await test.gateway.apiKeys.createKey({ accountId: caller.accountId, name: 'revoked elsewhere' });
      assert.equal((await sendWith(created.plaintext)).statusCode, 200, 'the key works, and this gateway now remembers it');
      // What `wagw key revoke` does: its own gateway on the same database.
      const config = loadConfig({ DATABASE_URL: test.database.url, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: '7e57'.repeat(16) });
      const cli = await createGateway(config, createLogger(config));
      try {
        await cli.apiKeys.revokeKey(operatorScope(), created.apiKey.id);
      } finally {
        await cli.close();
      }
      await new Promise((resolve) => setTimeout(resolve, VERIFIED_KEY_TTL_MS + 50));
      const refused = await sendWith(created.plaintext);
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.json().error, 'invalid_api_key');
    });

    it('a lookup that read the key just before its revocation does not make the key work afterwards', async () => {
      const created = await test.gateway.apiKeys.createKey({ accountId: caller.accountId, name: 'revoked mid-lookup' });
      const gate = new ResultGate();
      // A connection of its own: a held result also holds its connection, and SQLite's single
      // connection would then keep the revocation out.
      const own = openStore(loadConfig({ DATABASE_URL: test.database.url }).database);
      const authenticator = new ApiKeyAuthenticator({ ...own, db: own.db.withPlugin(gate) }, test.gateway.logger);

      // The lookup reads the row while the key is active; its answer is held back...
      const inFlight = authenticator.authenticate(`Bearer ${created.plaintext}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // ...while the revocation commits and is announced, and only then arrives.
      await revokeApiKey(test.gateway.store.db, created.apiKey.id, new Date());
      authenticator.forget(created.apiKey.id);
      gate.release();
      await inFlight.catch(() => undefined);

      try {
        await assert.rejects(authenticator.authenticate(`Bearer ${created.plaintext}`), { code: 'invalid_api_key' });
      } finally {
        await own.close();
      }
    });

    it('an unknown key is not remembered as unknown: once its row exists, it works on the next request', async () => {
      const generated = generateApiKey('wagw');
      await assert.rejects(test.gateway.authenticator.authenticate(`Bearer ${generated.plaintext}`), { code: 'invalid_api_key' });
      const key = {
        id: newId('apiKey'),
        accountId: caller.accountId,
        name: 'late',
        hint: generated.hint,
        createdByUserId: null,
        createdByEmail: null,
        scopes: DEFAULT_API_KEY_SCOPES,
        createdAt: new Date(),
        revokedAt: null,
        lastUsedAt: null,
      };
      await insertApiKey(test.gateway.store.db, key, generated.hash);
      assert.equal((await test.gateway.authenticator.authenticate(`Bearer ${generated.plaintext}`)).id, key.id);
    });
  });
}
