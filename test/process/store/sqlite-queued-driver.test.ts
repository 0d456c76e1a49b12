import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import { openStore, type Store } from '../../../src/store/database.ts';

// The queued driver replaces only SQLite's connection lock; PostgreSQL's pool is untouched, so
// these tests run on SQLite alone.
describe('SQLite queries take the one connection in turn (queued driver)', () => {
  let directory: string;
  let store: Store;

  before(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-queued-'));
    store = openStore(loadConfig({ DATABASE_URL: `sqlite:${path.join(directory, 'queued.db')}` }).database);
    await sql`create table turns (id integer primary key, note text not null)`.execute(store.db);
  });

  after(async () => {
    await store.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('a query waits while a transaction holds the connection, then sees what it committed', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = store.db.transaction().execute(async (trx) => {
      await sql`insert into turns (id, note) values (1, 'inside')`.execute(trx);
      await held;
    });
    let readDone = false;
    const read = sql<{ count: number }>`select count(*) as count from turns`.execute(store.db).then((result) => {
      readDone = true;
      return result.rows[0]!.count;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(readDone, false, "the read ran inside another caller's open transaction");
    release();
    await transaction;
    assert.equal(await read, 1);
  });

  it('waiting queries run in the order they asked, one at a time', async () => {
    const order: number[] = [];
    let running = 0;
    let mostAtOnce = 0;
    await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        store.db.connection().execute(async (connection) => {
          running += 1;
          mostAtOnce = Math.max(mostAtOnce, running);
          await sql`select ${index} as turn`.execute(connection);
          order.push(index);
          running -= 1;
        }),
      ),
    );
    assert.equal(mostAtOnce, 1);
    assert.deepEqual(
      order,
      Array.from({ length: 100 }, (_, index) => index),
    );
  });

  it('a failing query hands the connection on: every query queued behind it still runs', async () => {
    const failing = sql`select * from no_such_table`.execute(store.db);
    const queued = Array.from({ length: 20 }, (_, index) => sql<{ turn: number }>`select ${index} as turn`.execute(store.db));
    await assert.rejects(failing, /no such table/);
    const turns = (await Promise.all(queued)).map((result) => Number(result.rows[0]!.turn));
    assert.deepEqual(
      turns,
      Array.from({ length: 20 }, (_, index) => index),
    );
  });

  it('a transaction that read before another process wrote still commits its own write', async () => {
    // Another process (the CLI, or a second gateway on the same file) inserts a row as soon as
    // this transaction has read. A deferred transaction would then fail its write at once with
    // SQLITE_BUSY; an immediate one holds the other writer off, by its busy timeout, until commit.
    const file = path.join(directory, 'queued.db');
    const otherProcess = spawn(
      process.execPath,
      [
        '-e',
        `
      const Database = require('better-sqlite3');
      process.stdin.once('data', () => {
        const db = new Database(${JSON.stringify(file)});
        db.pragma('busy_timeout = 5000');
        db.prepare("insert into turns (id, note) values (2001, 'other process')").run();
        process.stdout.write('committed');
        db.close();
      });
    `,
      ],
      { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const otherCommitted = new Promise<void>((resolve) => otherProcess.stdout.once('data', () => resolve()));
    const otherExited = new Promise<number | null>((resolve) => otherProcess.once('exit', resolve));
    await store.db.transaction().execute(async (trx) => {
      await sql`select count(*) from turns`.execute(trx);
      otherProcess.stdin.end('go\n');
      // Without the write lock held, the other process commits here; with it, it waits for ours.
      await Promise.race([otherCommitted, new Promise((resolve) => setTimeout(resolve, 500))]);
      await sql`insert into turns (id, note) values (2000, 'this process')`.execute(trx);
    });
    assert.equal(await otherExited, 0, 'the other process could not write after this transaction committed');
    const notes = await sql<{ note: string }>`select note from turns where id >= 2000 order by id`.execute(store.db);
    assert.deepEqual(
      notes.rows.map((row) => row.note),
      ['this process', 'other process'],
    );
  });
});
