/**
 * A store that cannot write is said plainly (issue 26, item 7): SQLite's full disk surfaces as
 * itself rather than as the failed ROLLBACK after it, /health turns 503 with storage
 * "unwritable" while writes fail, and /metrics tells the free space of the data and media disks.
 * SQLite's disk is made full for real with PRAGMA max_page_count (per connection, and the store
 * has one); PostgreSQL's database is made read-only, as a standby that a failover left behind is.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../../src/config.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const METRICS_TOKEN = 'unwritable-storage-metrics-token';

/** Lets the SQLite file grow by only a few pages more. */
async function fillSqlite(store: Store): Promise<void> {
  const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(store.db);
  await sql.raw(`pragma max_page_count = ${rows[0]!.page_count + 1}`).execute(store.db);
}

describe('a full SQLite disk is reported as itself', () => {
  let directory: string;
  let store: Store;

  before(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-full-'));
    store = openStore(loadConfig({ DATABASE_URL: `sqlite:${path.join(directory, 'full.db')}` }).database);
    await sql`create table blobs (id integer primary key, data blob not null)`.execute(store.db);
  });
  after(async () => {
    await store.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('a transaction that fills the disk fails with "database or disk is full", not "cannot rollback"', async () => {
    await fillSqlite(store);
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        for (let index = 0; index < 20; index++) await sql`insert into blobs (data) values (${Buffer.alloc(16_384)})`.execute(trx);
      }),
      (error: Error & { code?: string }) => {
        assert.match(error.message, /database or disk is full/);
        assert.match(String(error.code), /^SQLITE_FULL/);
        return true;
      },
    );
    // The connection is usable afterwards: nothing is left half open.
    assert.deepEqual((await sql<{ one: number }>`select 1 as one`.execute(store.db)).rows, [{ one: 1 }]);
  });
});

for (const dialect of dialects) {
  describe(`/health and /metrics on a store that cannot write (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_METRICS_TOKEN: METRICS_TOKEN });
      account = await seedAccount(test.gateway);
    });
    after(() => test?.close());

    it('exports the free bytes of the data and media disks, read at each scrape', async () => {
      const response = await test.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.equal(response.statusCode, 200);
      for (const volume of ['data', 'media']) {
        const line = new RegExp(`^wagw_volume_free_bytes\\{volume="${volume}"\\} (\\d+(?:\\.\\d+)?(?:e\\+\\d+)?)$`, 'm').exec(
          response.body,
        );
        assert.ok(line, `no free-space line for the ${volume} volume`);
        assert.ok(Number(line[1]) > 0);
      }
    });

    it('answers 503 {ok: false, storage: "unwritable"} while writes fail, and the log names the cause', async () => {
      assert.deepEqual((await test.inject({ method: 'GET', url: '/health' })).json(), { ok: true });
      const restore = await makeUnwritable(test);
      try {
        let failed = false;
        for (let index = 0; index < 200 && !failed; index++) {
          const response = await test.post(
            '/send_message',
            { from_phone: account.phones[0], to_phone: '+14155550100', message: `filling ${index} ${'x'.repeat(3_000)}` },
            account.apiKey,
          );
          failed = response.statusCode >= 500;
        }
        assert.ok(failed, 'a send failed once the store could not write');
        const health = await test.inject({ method: 'GET', url: '/health' });
        assert.equal(health.statusCode, 503, health.body);
        assert.deepEqual(health.json(), { ok: false, storage: 'unwritable' });
        assert.ok(
          test.logLines.some((line) => /database or disk is full|read-only transaction/.test(line)),
          'the log names the cause',
        );
        assert.ok(!test.logLines.some((line) => line.includes('cannot rollback')), 'no failed ROLLBACK hides it');
      } finally {
        await restore();
      }
    });
  });
}

/** Makes the test gateway's store refuse writes; returns what undoes it. */
async function makeUnwritable(test: TestGateway): Promise<() => Promise<void>> {
  if (test.gateway.store.dialect === 'sqlite') {
    await fillSqlite(test.gateway.store);
    return async () => void (await sql.raw('pragma max_page_count = 1073741823').execute(test.gateway.store.db));
  }
  // Sessions opened from now on are read-only; the gateway's open ones are ended, so that its
  // pool opens new ones. This session, opened before, can undo it.
  const admin = new pg.Client({ connectionString: test.database.url });
  await admin.connect();
  const name = new URL(test.database.url).pathname.slice(1);
  await admin.query(`alter database "${name}" set default_transaction_read_only = on`);
  await admin.query(
    'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  // The pool drops its ended connections as it hears of their end.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return async () => {
    await admin.query(`alter database "${name}" set default_transaction_read_only = off`);
    await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    await admin.end();
  };
}
