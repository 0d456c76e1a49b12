import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import { openStore } from '../../../src/store/database.ts';
import { createGateway, createLogger } from '../../../src/main.ts';
import { createTestDatabase, dialects } from '../../support/databases.ts';

const KEY = '7e'.repeat(32);

// A 200 promises that the data is on disk, which rests on a few database settings. The gateway
// applies them itself, and refuses to start where they are not in force.
for (const dialect of dialects) {
  describe(`the durability settings (${dialect})`, () => {
    it('are in force on a store the gateway opens, and the start-up check passes', async () => {
      const database = await createTestDatabase(dialect);
      const store = openStore(loadConfig({ DATABASE_URL: database.url, WAGW_SECRET_KEY: KEY }).database);
      try {
        await store.assertDurable();
        if (dialect === 'postgres') {
          const { rows } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(store.db);
          assert.equal(rows[0]!.synchronous_commit, 'on');
          const timeout = await sql<{ idle_in_transaction_session_timeout: string }>`show idle_in_transaction_session_timeout`.execute(
            store.db,
          );
          // A third of the default 15 s lease TTL.
          assert.equal(timeout.rows[0]!.idle_in_transaction_session_timeout, '5s');
        } else {
          // NORMAL, the driver syncing the log after each commit (ADR 0037).
          const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
          assert.equal(rows[0]!.synchronous, 1, 'NORMAL');
        }
      } finally {
        await store.close();
        await database.drop();
      }
    });
  });
}

if (dialects.includes('sqlite')) {
  describe("the durability settings with SQLite's log synced on the event loop (sqlite)", () => {
    it('are WAL with synchronous=FULL, and the start-up check refuses NORMAL there', async () => {
      const database = await createTestDatabase('sqlite');
      const store = openStore(
        loadConfig({ DATABASE_URL: database.url, WAGW_SECRET_KEY: KEY, WAGW_SQLITE_COMMIT_SYNC: 'event-loop' }).database,
      );
      try {
        await store.assertDurable();
        const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
        assert.equal(rows[0]!.synchronous, 2, 'FULL');
        // Without the driver's sync after each commit, NORMAL is not durable.
        await sql`pragma synchronous = NORMAL`.execute(store.db);
        await assert.rejects(store.assertDurable(), /synchronous is 1, not 2/);
      } finally {
        await store.close();
        await database.drop();
      }
    });
  });
}

if (dialects.includes('postgres')) {
  describe('a start-up where commits would not be durable (postgres)', () => {
    it('fails with the reason, instead of serving 200s it cannot keep', async () => {
      const database = await createTestDatabase('postgres');
      // Behind a pooler (prepared statements off) the gateway sets nothing itself; here the
      // client asks the server for asynchronous commits, as a misconfigured server would have them.
      const url = new URL(database.url);
      url.searchParams.set('options', '-c synchronous_commit=off');
      const config = loadConfig({
        DATABASE_URL: url.toString(),
        WAGW_DATABASE_PREPARED_STATEMENTS: 'false',
        WAGW_SECRET_KEY: KEY,
        LOG_LEVEL: 'silent',
      });
      try {
        await assert.rejects(createGateway(config, createLogger(config)), /synchronous_commit is off, not on/);
      } finally {
        await database.drop();
      }
    });
  });
}
