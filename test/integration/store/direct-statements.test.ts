import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import { compiledStatement } from '../../../src/store/compiled-statement.ts';
import { isUniqueViolation } from '../../../src/store/constraint-errors.ts';
import type { Store } from '../../../src/store/database.ts';
import { dialects, suiteStore } from '../../support/databases.ts';

// Compiled statements run on their transaction's connection without Kysely's executor
// (compiled-statement.ts); these are the promises that must survive that shortcut.

const insertAccountRow = compiledStatement((db, v: { id: string; name: string; createdAt: number }) =>
  db.insertInto('accounts').values({ id: v.id, name: v.name, plan: 'pro', custom_monthly_limit: null, created_at: v.createdAt }),
);
const insertAccountReturning = compiledStatement((db, v: { id: string; name: string; createdAt: number }) =>
  db
    .insertInto('accounts')
    .values({ id: v.id, name: v.name, plan: 'pro', custom_monthly_limit: null, created_at: v.createdAt })
    .returning(['id', 'name']),
);
const renameAccount = compiledStatement((db, v: { id: string; name: string }) =>
  db.updateTable('accounts').set({ name: v.name }).where('id', '=', v.id),
);
const accountName = compiledStatement((db, v: { id: string }) => db.selectFrom('accounts').select('name').where('id', '=', v.id));

async function namesOf(store: Store, ids: string[]): Promise<string[]> {
  const rows = await store.db.selectFrom('accounts').select('name').where('id', 'in', ids).orderBy('name').execute();
  return rows.map((row) => row.name);
}

for (const dialect of dialects) {
  describe(`compiled statements run on the connection of their transaction (${dialect})`, () => {
    const suite = suiteStore(dialect);

    it('a compiled write in a transaction that fails is rolled back with the Kysely writes around it', async () => {
      const { store } = suite;
      const before = newId('account');
      const compiled = newId('account');
      const failure = new Error('the batch failed after its writes');
      await assert.rejects(
        store.db.transaction().execute(async (trx) => {
          await trx
            .insertInto('accounts')
            .values({ id: before, name: 'Kysely', plan: 'pro', custom_monthly_limit: null, created_at: 1 })
            .execute();
          await insertAccountRow(trx, { id: compiled, name: 'Compiled', createdAt: 2 });
          // The compiled statement sees the transaction's own uncommitted row, so it is on its connection.
          assert.equal((await accountName(trx, { id: before })).rows[0]?.name, 'Kysely');
          await renameAccount(trx, { id: before, name: 'Renamed' });
          throw failure;
        }),
        failure,
      );
      assert.deepEqual(await namesOf(store, [before, compiled]), []);
    });

    it('a compiled write in a transaction commits with it, and is not seen outside before the commit', async () => {
      const { store } = suite;
      const id = newId('account');
      await store.db.transaction().execute(async (trx) => {
        await insertAccountRow(trx, { id, name: 'Committed', createdAt: 1 });
        // SQLite's one connection is held by this transaction; only PostgreSQL can look from outside.
        if (dialect === 'postgres') assert.deepEqual((await accountName(store.db, { id })).rows, []);
      });
      assert.deepEqual(await namesOf(store, [id]), ['Committed']);
    });

    it('results keep their shapes: rows for reads and RETURNING, a bigint count for writes', async () => {
      const { store } = suite;
      for (const db of [store.db, undefined]) {
        const run = async (work: (executor: Store['db']) => Promise<void>) =>
          db === undefined ? store.db.transaction().execute((trx) => work(trx)) : work(db);
        await run(async (executor) => {
          const id = newId('account');
          const returned = await insertAccountReturning(executor, { id, name: 'Shaped', createdAt: 1 });
          assert.deepEqual(returned.rows, [{ id, name: 'Shaped' }]);
          const renamed = await renameAccount(executor, { id, name: 'Reshaped' });
          assert.equal(renamed.numAffectedRows, 1n);
          assert.deepEqual(renamed.rows, []);
          const missing = await renameAccount(executor, { id: newId('account'), name: 'Nobody' });
          assert.equal(missing.numAffectedRows, 0n);
          assert.deepEqual((await accountName(executor, { id })).rows, [{ name: 'Reshaped' }]);
        });
      }
    });

    it('a duplicate key from a compiled write is still a unique violation, in and out of a transaction', async () => {
      const { store } = suite;
      const id = newId('account');
      await insertAccountRow(store.db, { id, name: 'First', createdAt: 1 });
      const outside = await insertAccountRow(store.db, { id, name: 'Again', createdAt: 2 }).catch((error: unknown) => error);
      assert.ok(isUniqueViolation(outside), `not a unique violation: ${String(outside)}`);
      const inside = await store.db
        .transaction()
        .execute((trx) => insertAccountRow(trx, { id, name: 'Again', createdAt: 2 }))
        .catch((error: unknown) => error);
      assert.ok(isUniqueViolation(inside), `not a unique violation: ${String(inside)}`);
      assert.deepEqual(await namesOf(store, [id]), ['First']);
    });

    it('a compiled statement on a transaction that has ended is refused, and does not run in a later one', async () => {
      const { store } = suite;
      let ended: Store['db'] | undefined;
      await store.db.transaction().execute(async (trx) => {
        await accountName(trx, { id: 'acc_none' });
        ended = trx;
      });
      const id = newId('account');
      await store.db.transaction().execute(async () => {
        await assert.rejects(insertAccountRow(ended!, { id, name: 'Late', createdAt: 1 }), /already committed/);
      });
      assert.deepEqual(await namesOf(store, [id]), []);
    });

    it('a compiled statement outside an open transaction is not part of it: its rollback does not undo it', async () => {
      const { store } = suite;
      const held = newId('account');
      const waiting = newId('account');
      let outside: Promise<unknown> | undefined;
      await assert.rejects(
        store.db.transaction().execute(async (trx) => {
          await insertAccountRow(trx, { id: held, name: 'Held', createdAt: 1 });
          outside = insertAccountRow(store.db, { id: waiting, name: 'Waiting', createdAt: 2 });
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      await outside;
      assert.deepEqual(await namesOf(store, [held, waiting]), ['Waiting']);
    });
  });
}
