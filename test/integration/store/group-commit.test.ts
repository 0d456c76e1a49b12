import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Transaction } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import type { Account } from '../../../src/domain/model.ts';
import { newId } from '../../../src/domain/ids.ts';
import { isUniqueViolation } from '../../../src/store/constraint-errors.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { EndOfBatch, GroupCommitter, type BatchStep, type BatchStepKind } from '../../../src/store/group-commit.ts';
import { WriteFailures } from '../../../src/store/write-failures.ts';
import { migrateToLatest } from '../../../src/store/migrate.ts';
import { findAccountById, insertAccount } from '../../../src/store/repositories/accounts.ts';
import type { Database } from '../../../src/store/schema.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';

function newAccount(name = 'Group commit'): Account {
  return { id: newId('account'), name, plan: 'starter', customMonthlyLimit: null, createdAt: new Date() };
}

/** Counts the transactions opened on the store, from now on. */
function countTransactions(store: Store): { readonly count: number } {
  const counter = { count: 0 };
  const open = store.db.transaction.bind(store.db);
  store.db.transaction = () => {
    counter.count++;
    return open();
  };
  return counter;
}

/** Settles in a later turn of the event loop, after anything already scheduled. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

for (const dialect of dialects) {
  // A lost wake-up would leave a caller waiting forever: fail it instead of hanging the run.
  describe(`GroupCommitter (${dialect})`, { timeout: 30_000 }, () => {
    let database: TestDatabase;
    let url: string;
    let store: Store;
    let transactions: { readonly count: number };

    before(async () => {
      database = await createTestDatabase(dialect);
      url = database.url;
      const migrating = openStore(loadConfig({ DATABASE_URL: url }).database);
      await migrateToLatest(migrating.db, migrating.dialect);
      await migrating.close();
    });

    // A fresh connection per test, so that each test counts only its own transactions.
    beforeEach(async () => {
      await store?.close();
      store = openStore(loadConfig({ DATABASE_URL: url }).database);
      transactions = countTransactions(store);
    });

    after(async () => {
      await store?.close();
      await database.drop();
    });

    it('50 concurrent writes all resolve and every row is stored', async () => {
      const committer = new GroupCommitter(store.db, 256);
      const accounts = Array.from({ length: 50 }, (_, index) => newAccount(`concurrent ${index}`));
      await Promise.all(accounts.map((account) => committer.run((trx) => insertAccount(trx, account))));
      for (const account of accounts) {
        const stored = await findAccountById(store.db, account.id);
        assert.equal(stored?.name, account.name, `${account.id} is missing`);
      }
    });

    it('50 concurrent writes share a handful of transactions, not one each', async () => {
      const committer = new GroupCommitter(store.db, 256);
      await Promise.all(Array.from({ length: 50 }, () => committer.run((trx) => insertAccount(trx, newAccount()))));
      assert.ok(transactions.count >= 1, 'the writes ran in a transaction');
      assert.ok(transactions.count < 10, `50 writes took ${transactions.count} transactions`);
    });

    it('writes queued while a commit is in flight all join the next transaction', async () => {
      const committer = new GroupCommitter(store.db, 256);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const firstStarted = new Promise<void>((resolve) => (started = resolve));
      const first = committer.run(async (trx) => {
        started();
        await gate;
        await insertAccount(trx, newAccount('first'));
      });
      await firstStarted;
      const later = Array.from({ length: 10 }, (_, index) => committer.run((trx) => insertAccount(trx, newAccount(`later ${index}`))));
      await nextTurn();
      release();
      await Promise.all([first, ...later]);
      assert.equal(transactions.count, 2, 'one transaction for the first write and one for the ten queued behind it');
    });

    it('each caller gets back what its own work returned', async () => {
      const committer = new GroupCommitter(store.db, 256);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          committer.run(async (trx) => {
            const account = newAccount(`result ${index}`);
            await insertAccount(trx, account);
            return { index, id: account.id };
          }),
        ),
      );
      for (const [index, result] of results.entries()) assert.equal(result.index, index);
      for (const result of results) assert.ok(await findAccountById(store.db, result.id));
    });

    it('one failing write rejects only its caller; the rest of its batch resolves and is committed', async () => {
      const existing = newAccount('already there');
      await insertAccount(store.db, existing);
      const committer = new GroupCommitter(store.db, 256);
      const accounts = Array.from({ length: 10 }, (_, index) => newAccount(`neighbour ${index}`));
      // The duplicate sits mid-batch: writes before it have run in the failed transaction and
      // were rolled back, writes after it never ran in it.
      const outcomes = await Promise.allSettled([
        ...accounts.slice(0, 5).map((account) => committer.run((trx) => insertAccount(trx, account))),
        committer.run((trx) => insertAccount(trx, { ...existing, name: 'duplicate' })),
        ...accounts.slice(5).map((account) => committer.run((trx) => insertAccount(trx, account))),
      ]);
      const duplicate = outcomes[5]!;
      assert.equal(duplicate.status, 'rejected');
      assert.ok(isUniqueViolation(duplicate.reason), `the caller sees the database's own error: ${String(duplicate.reason)}`);
      const others = outcomes.filter((_, index) => index !== 5);
      assert.deepEqual(
        others.map((outcome) => outcome.status),
        Array(10).fill('fulfilled'),
      );
      for (const account of accounts) assert.ok(await findAccountById(store.db, account.id), `${account.name} was not committed`);
      assert.equal((await findAccountById(store.db, existing.id))?.name, 'already there', 'the existing row is untouched');
    });

    it("a caller's promise resolves only once its write is visible to another connection", async () => {
      const committer = new GroupCommitter(store.db, 256);
      const observer = openStore(loadConfig({ DATABASE_URL: url }).database);
      try {
        const accounts = Array.from({ length: 20 }, (_, index) => newAccount(`visible ${index}`));
        const seenByObserver = await Promise.all(
          accounts.map((account) =>
            committer.run((trx) => insertAccount(trx, account)).then(() => findAccountById(observer.db, account.id)),
          ),
        );
        for (const [index, seen] of seenByObserver.entries())
          assert.equal(seen?.id, accounts[index]!.id, `${accounts[index]!.name} was not yet visible`);
      } finally {
        await observer.close();
      }
    });

    it('drain() resolves only after every queued write has settled, failures included', async () => {
      const existing = newAccount('drain existing');
      await insertAccount(store.db, existing);
      const committer = new GroupCommitter(store.db, 7);
      let settled = 0;
      const count = 30;
      for (let index = 0; index < count; index++) {
        const account = index === 13 ? existing : newAccount(`drain ${index}`);
        committer
          .run((trx) => insertAccount(trx, account))
          .then(
            () => settled++,
            () => settled++,
          );
      }
      await committer.drain();
      // Settlement callbacks run as microtasks after each promise settles; drain's own
      // continuation is queued behind them.
      assert.equal(settled, count);
    });

    it('drain() on an idle committer resolves at once', async () => {
      const committer = new GroupCommitter(store.db, 256);
      await committer.drain();
      assert.equal(transactions.count, 0);
    });

    it('no transaction holds more than maxBatchSize writes', async () => {
      const committer = new GroupCommitter(store.db, 5);
      const writesPerTransaction = new Map<Transaction<Database>, number>();
      await Promise.all(
        Array.from({ length: 20 }, () =>
          committer.run(async (trx) => {
            writesPerTransaction.set(trx, (writesPerTransaction.get(trx) ?? 0) + 1);
            await insertAccount(trx, newAccount());
          }),
        ),
      );
      assert.ok(transactions.count >= 4, `20 writes at batch size 5 took ${transactions.count} transactions`);
      for (const size of writesPerTransaction.values()) assert.ok(size <= 5, `a transaction held ${size} writes`);
      assert.equal(
        [...writesPerTransaction.values()].reduce((sum, size) => sum + size, 0),
        20,
      );
    });

    it('with grouping off (WAGW_GROUP_COMMIT=false), every write commits in a transaction of its own', async () => {
      const committer = new GroupCommitter(store.db, 256, 1, false);
      const accounts = Array.from({ length: 20 }, (_, index) => newAccount(`alone ${index}`));
      const transactionsSeen = new Set<Transaction<Database>>();
      await Promise.all(
        accounts.map((account) =>
          committer.run(async (trx) => {
            transactionsSeen.add(trx);
            await insertAccount(trx, account);
          }),
        ),
      );
      assert.equal(transactions.count, 20);
      assert.equal(transactionsSeen.size, 20);
      for (const account of accounts) assert.equal((await findAccountById(store.db, account.id))?.name, account.name);
    });

    it('with grouping off, a failing write rejects only its caller, and drain() waits for writes in flight', async () => {
      const committer = new GroupCommitter(store.db, 256, 1, false);
      const duplicate = newAccount('duplicate');
      await committer.run((trx) => insertAccount(trx, duplicate));
      const failing = committer.run((trx) => insertAccount(trx, duplicate));
      const fine = newAccount('fine');
      let settled = false;
      void committer.run((trx) => insertAccount(trx, fine)).then(() => (settled = true));
      await committer.drain();
      assert.ok(settled, 'drain() resolved before a write in flight had committed');
      await assert.rejects(failing, (error: unknown) => isUniqueViolation(error));
      assert.equal((await findAccountById(store.db, fine.id))?.name, 'fine');
    });

    it("a batch's steps run by rank, whichever item asked first, and a step may add to a later one but not to one that ran", async () => {
      const ran: string[] = [];
      const late: BatchStepKind<BatchStep & { parts: string[] }> = {
        rank: 2,
        create: () => ({
          parts: [],
          finish: async function (this: { parts: string[] }) {
            ran.push(`late ${this.parts.join('+')}`);
          },
        }),
      };
      const early: BatchStepKind<BatchStep> = {
        rank: 1,
        create: () => ({
          finish: async (_trx, batch) => {
            ran.push('early');
            batch.step(late).parts.push('from early');
          },
        }),
      };
      const batch = new EndOfBatch();
      batch.step(late).parts.push('from an item');
      batch.step(early);
      await store.db.transaction().execute((trx) => batch.finish(trx));
      assert.deepEqual(ran, ['early', 'late from an item+from early']);
      assert.throws(() => batch.step(early), /after it ran/);
    });

    it('two writes that lock the same rows in opposite orders both commit: the loser of the deadlock runs again, and /health hears of no failure', {
      skip: dialect !== 'postgres' && 'SQLite has one writer, so its transactions never deadlock',
    }, async () => {
      const failures = new WriteFailures();
      // Without grouping, each write has a transaction of its own, side by side on the pool.
      const committer = new GroupCommitter(store.db, 256, 2, false, failures);
      const first = newAccount('first');
      const second = newAccount('second');
      await insertAccount(store.db, first);
      await insertAccount(store.db, second);
      let attempts = 0;
      const holding = { first: Promise.withResolvers<void>(), second: Promise.withResolvers<void>() };
      const rename = (own: Account, other: Account, mine: 'first' | 'second', theirs: 'first' | 'second') =>
        committer.run(async (trx) => {
          attempts++;
          await trx
            .updateTable('accounts')
            .set({ name: `${mine} was here` })
            .where('id', '=', own.id)
            .execute();
          holding[mine].resolve();
          // Each waits until the other holds its row: the one order of events that deadlocks.
          await holding[theirs].promise;
          await trx
            .updateTable('accounts')
            .set({ name: `${mine} was here` })
            .where('id', '=', other.id)
            .execute();
        });
      await Promise.all([rename(first, second, 'first', 'second'), rename(second, first, 'second', 'first')]);
      assert.equal(attempts, 3, 'PostgreSQL ended one of the two, which ran again once the other had committed');
      const names = [(await findAccountById(store.db, first.id))?.name, (await findAccountById(store.db, second.id))?.name];
      assert.equal(new Set(names).size, 1, `the write that committed last renamed both rows: ${names.join(', ')}`);
      assert.equal(failures.recent(), undefined, 'a deadlock is no sign that the store cannot write');
    });
  });
}
