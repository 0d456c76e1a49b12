import assert from 'node:assert/strict';
import { newWhatsAppNumber } from '../../../src/domain/model.ts';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import { compiledStatement } from '../../../src/store/compiled-statement.ts';
import type { Store } from '../../../src/store/database.ts';
import { insertAccount } from '../../../src/store/repositories/accounts.ts';
import { findNumberByPhone, insertNumber } from '../../../src/store/repositories/numbers.ts';
import { listEnabledWebhooks } from '../../../src/store/repositories/webhooks.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { sql } from 'kysely';
import { dialects, openMigratedTestStore, type MigratedTestStore } from '../../support/databases.ts';

async function addAccount(store: Store, name: string, plan: 'starter' | 'pro'): Promise<string> {
  const id = newId('account');
  await insertAccount(store.db, { id, name, plan, customMonthlyLimit: null, createdAt: new Date() });
  return id;
}

describe('statements compiled once', () => {
  const opened: MigratedTestStore[] = [];
  const stores: Store[] = [];
  let builds = 0;
  const accountByNameAndPlan = compiledStatement((db, v: { name: string; plan: string }) => {
    builds++;
    // 'enterprise' is a constant of the statement, not one of its values: it must survive.
    return db
      .selectFrom('accounts')
      .select(['id', 'name'])
      .where('name', '=', v.name)
      .where('plan', '=', v.plan)
      .where('plan', '!=', 'enterprise');
  });

  before(async () => {
    for (const dialect of dialects) opened.push(await openMigratedTestStore(dialect));
    stores.push(...opened.map((each) => each.store));
  });

  after(async () => {
    for (const each of opened) await each.close();
  });

  it('each run binds its own values, on every database, inside transactions too, and each database compiles it once', async () => {
    builds = 0;
    for (const store of stores) {
      const ada = await addAccount(store, 'Ada', 'pro');
      const grace = await addAccount(store, 'Grace', 'starter');
      assert.deepEqual((await accountByNameAndPlan(store.db, { name: 'Ada', plan: 'pro' })).rows, [{ id: ada, name: 'Ada' }]);
      assert.deepEqual((await accountByNameAndPlan(store.db, { name: 'Grace', plan: 'starter' })).rows, [{ id: grace, name: 'Grace' }]);
      assert.deepEqual((await accountByNameAndPlan(store.db, { name: 'Grace', plan: 'pro' })).rows, []);
      const inTransaction = await store.db.transaction().execute((trx) => accountByNameAndPlan(trx, { name: 'Ada', plan: 'pro' }));
      assert.deepEqual(inTransaction.rows, [{ id: ada, name: 'Ada' }]);
    }
    assert.equal(builds, stores.length, 'one build per database, however many runs');
  });

  it('a value used to compute another value is refused when the statement is first compiled', async () => {
    const misuse = compiledStatement((db, v: { name: string }) => db.selectFrom('accounts').select('id').where('name', '=', `${v.name}%`));
    for (const store of stores) {
      await assert.rejects(misuse(store.db, { name: 'Ada' }), /used a value inside another value/);
    }
    // A value put into the SQL text itself (a name, a raw fragment) would be frozen there.
    const inText = compiledStatement((db, v: { column: string }) =>
      db.selectFrom('accounts').select('id').where(sql.ref(v.column), '=', 'x'),
    );
    for (const store of stores) {
      await assert.rejects(inText(store.db, { column: 'name' }), /put a value into its SQL text/);
    }
    // Values are one flat object: a nested read would bind undefined for good.
    const nested = compiledStatement((db, v: { account: { name: string } }) =>
      db.selectFrom('accounts').select('id').where('name', '=', v.account.name),
    );
    for (const store of stores) {
      await assert.rejects(nested(store.db, { account: { name: 'Ada' } }), /not one of its top-level names/);
    }
  });
});

describe('compiled statements on PostgreSQL are prepared once per connection', { skip: !dialects.includes('postgres') }, () => {
  let opened: MigratedTestStore;
  let store: Store;

  before(async () => {
    // One connection, so that the statements the test looks for are on the one it asks.
    opened = await openMigratedTestStore('postgres', { WAGW_DATABASE_POOL_SIZE: '1' });
    store = opened.store;
  });

  after(() => opened?.close());

  it('a compiled statement runs as a named prepared statement, and an ordinary query does not', async () => {
    await findNumberByPhone(store.db, '+447700900123' as E164);
    await findNumberByPhone(store.db, '+447700900124' as E164);
    await sql`select count(*) from accounts where name = ${'not compiled'}`.execute(store.db);
    const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(store.db);
    const numberLookups = prepared.rows.filter((row) => row.statement.includes('from "whatsapp_numbers"'));
    assert.equal(numberLookups.length, 1, `one prepared number lookup: ${JSON.stringify(prepared.rows)}`);
    assert.match(numberLookups[0]!.name, /^wagw_\d+$/);
    assert.ok(
      !prepared.rows.some((row) => row.statement.includes('not compiled') || row.statement.includes('count(*)')),
      'an ordinary query is not prepared',
    );
  });

  it('with WAGW_DATABASE_PREPARED_STATEMENTS=false nothing is prepared, and the statements still answer', async () => {
    const unprepared = await openMigratedTestStore('postgres', {
      WAGW_DATABASE_POOL_SIZE: '1',
      WAGW_DATABASE_PREPARED_STATEMENTS: 'false',
    });
    try {
      const accountId = await addAccount(unprepared.store, 'Pooled', 'pro');
      assert.deepEqual(await listEnabledWebhooks(unprepared.store.db, accountId), []);
      assert.equal(await findNumberByPhone(unprepared.store.db, '+447700900126' as E164), undefined);
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(unprepared.store.db);
      assert.deepEqual(prepared.rows, []);
    } finally {
      await unprepared.close();
    }
  });

  it('a prepared statement keeps working after a migration adds a column, as in a rolling upgrade', async () => {
    const accountId = await addAccount(store, 'Upgrade', 'pro');
    const at = new Date();
    await insertNumber(
      store.db,
      newWhatsAppNumber(
        {
          id: newId('number'),
          accountId,
          phone: '+447700900125' as E164,
          engine: 'sandbox',
          status: 'connected',
        },
        at,
      ),
    );
    assert.equal((await findNumberByPhone(store.db, '+447700900125' as E164))?.accountId, accountId);
    assert.deepEqual(await listEnabledWebhooks(store.db, accountId), []);
    // What a newer gateway's migration would do while this one keeps running.
    await sql`alter table whatsapp_numbers add column added_by_a_later_version text`.execute(store.db);
    await sql`alter table webhooks add column added_by_a_later_version text`.execute(store.db);
    assert.equal((await findNumberByPhone(store.db, '+447700900125' as E164))?.accountId, accountId);
    assert.deepEqual(await listEnabledWebhooks(store.db, accountId), []);
  });
});
