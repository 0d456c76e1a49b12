/**
 * With WAGW_SQLITE_COMMIT_SYNC=thread-pool, SQLite commits without syncing its log and the
 * driver syncs it on libuv's thread pool (ADR 0037). The promise of a 200 must hold as it does
 * with synchronous=FULL: a write is reported only once its log is on disk, a sync that fails is
 * an outage, and the descriptor synced is always the live log's. The disk's fsync is the one
 * part stood in for, through the store's own seam.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import type { Account } from '../../../src/domain/model.ts';
import { newId } from '../../../src/domain/ids.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { GroupCommitter } from '../../../src/store/group-commit.ts';
import { migrateToLatest } from '../../../src/store/migrate.ts';
import { isStorageOutage } from '../../../src/store/outage-errors.ts';
import { findAccountById, insertAccount } from '../../../src/store/repositories/accounts.ts';
import { fsyncOnThreadPool, type FileSync } from '../../../src/store/wal-sync.ts';
import { WriteFailures } from '../../../src/store/write-failures.ts';
import { createTestDatabase, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';

function newAccount(): Account {
  return { id: newId('account'), name: 'Log sync', plan: 'starter', customMonthlyLimit: null, createdAt: new Date() };
}

/** A disk whose syncs wait until the test lets them finish, or fail when it says so. */
class ControlledDisk {
  readonly syncedDescriptors: number[] = [];
  holding = false;
  failing = false;
  private waiting: (() => void)[] = [];

  readonly fileSync: FileSync = async (fd) => {
    this.syncedDescriptors.push(fd);
    if (this.holding) await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.failing) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    await fsyncOnThreadPool(fd);
  };

  get syncsWaiting(): number {
    return this.waiting.length;
  }

  finishSyncs(): void {
    this.holding = false;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 1_000 && !(await condition()); turn++) await new Promise((resolve) => setTimeout(resolve, 2));
  assert.ok(await condition(), 'the condition came about');
}

describe("SQLite's log synced on the thread pool (sqlite)", { timeout: 30_000 }, () => {
  let database: TestDatabase;
  let store: Store;
  let disk: ControlledDisk;
  let writeFailures: WriteFailures;
  let committer: GroupCommitter;

  const openSyncingStore = () =>
    openStore(loadConfig({ DATABASE_URL: database.url, WAGW_SQLITE_COMMIT_SYNC: 'thread-pool' }).database, {
      walFileSync: disk.fileSync,
    });

  before(async () => {
    database = await createTestDatabase('sqlite');
    disk = new ControlledDisk();
    store = openSyncingStore();
    await migrateToLatest(store.db, store.dialect);
  });
  afterEach(async () => {
    disk.finishSyncs();
    await committer?.drain();
  });
  after(async () => {
    await store.close();
    await database.drop();
  });

  const startCommitter = () => {
    writeFailures = new WriteFailures();
    committer = new GroupCommitter(store.db, 256, 1, true, writeFailures);
  };

  it("settles a batch's items only once the sync of its log is done, and no read sees the commit before", async () => {
    startCommitter();
    disk.holding = true;
    const account = newAccount();
    let settled = false;
    const writing = committer
      .run((trx) => insertAccount(trx, account))
      .then(() => {
        settled = true;
      });
    await until(() => disk.syncsWaiting > 0);
    const read: { done: boolean; found?: Account | undefined } = { done: false };
    const reading = findAccountById(store.db, account.id).then((found) => {
      Object.assign(read, { done: true, found });
    });
    for (let turn = 0; turn < 20; turn++) await nextTurn();
    assert.equal(settled, false, 'the caller waits for the sync');
    assert.equal(read.done, false, 'a read waits for the sync too, so nothing acts on a commit that is not on disk');
    disk.finishSyncs();
    await Promise.all([writing, reading]);
    assert.equal(settled, true);
    assert.equal(read.found?.id, account.id);
  });

  it('keeps the descriptor on the live log when a checkpoint truncates it', async () => {
    startCommitter();
    const walPath = `${database.url.slice('sqlite:'.length)}-wal`;
    await committer.run((trx) => insertAccount(trx, newAccount()));
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    assert.equal(fs.statSync(walPath).size, 0, 'the checkpoint emptied the log');
    await committer.run((trx) => insertAccount(trx, newAccount()));
    const descriptor = disk.syncedDescriptors.at(-1)!;
    const synced = fs.fstatSync(descriptor);
    const live = fs.statSync(walPath);
    assert.deepEqual([synced.ino, synced.size], [live.ino, live.size]);
    assert.ok(live.size > 0, 'the commit after the checkpoint is in the log synced');
  });

  it('syncs the log a reopened store recreated, not the one the last close removed', async () => {
    await store.close();
    store = openSyncingStore();
    startCommitter();
    await committer.run((trx) => insertAccount(trx, newAccount()));
    const walPath = `${database.url.slice('sqlite:'.length)}-wal`;
    assert.equal(fs.fstatSync(disk.syncedDescriptors.at(-1)!).ino, fs.statSync(walPath).ino);
  });

  it("fails a batch's items with the store's outage error when the sync fails, without running them again", async () => {
    startCommitter();
    disk.holding = true;
    const runs = new Map<string, number>();
    const accounts = [newAccount(), newAccount(), newAccount()];
    const writes = accounts.map((account) =>
      committer.run(async (trx) => {
        runs.set(account.id, (runs.get(account.id) ?? 0) + 1);
        await insertAccount(trx, account);
      }),
    );
    await until(() => disk.syncsWaiting > 0);
    disk.failing = true;
    disk.finishSyncs();
    const outcomes = await Promise.allSettled(writes);
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.ok(isStorageOutage(outcome.reason), String(outcome.reason));
    }
    assert.deepEqual([...runs.values()], [1, 1, 1], 'committed work is not run a second time');
    assert.ok(writeFailures.recent() !== undefined, '/health hears of it');
    // The kernel may have dropped the pages it could not write, so no later sync is trusted.
    disk.failing = false;
    await assert.rejects(
      committer.run((trx) => insertAccount(trx, newAccount())),
      (error) => isStorageOutage(error),
    );
  });
});

describe('a send whose SQLite log cannot be synced (sqlite)', () => {
  let test: TestGateway | undefined;
  after(() => test?.close());

  it('is answered 503 storage_unavailable with Retry-After, as other write failures are', async () => {
    const disk = new ControlledDisk();
    test = await startTestGateway('sqlite', { WAGW_SQLITE_COMMIT_SYNC: 'thread-pool' }, { walFileSync: disk.fileSync });
    const account = await seedAccount(test.gateway);
    disk.failing = true;
    const response = await test.post(
      '/send_message',
      { from_phone: account.phones[0], to_phone: '+14155550123', message: 'hi' },
      account.apiKey,
    );
    assert.deepEqual([response.statusCode, response.json().error], [503, 'storage_unavailable'], response.body);
    assert.ok(Number(response.headers['retry-after']) >= 1);
  });
});
