/**
 * node --import tsx bench/sqlite-queue.ts
 *
 * The CPU one SQLite point read costs when many callers wait for the one connection, through
 * Kysely's own SQLite dialect and through QueuedSqliteDialect (src/store/sqlite-queued-driver.ts).
 * It backs a row of docs/benchmarks.md's send table; it is not part of `npm run bench`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { QueuedSqliteDialect } from '../src/store/sqlite-queued-driver.ts';

const QUERIES = 40_000;
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-sqlite-queue-'));

interface Row {
  id: number;
  note: string;
}

async function cpuMicrosecondsPerQuery(dialect: SqliteDialect, waiting: number): Promise<number> {
  const db = new Kysely<{ rows: Row }>({ dialect });
  await sql`create table rows (id integer primary key, note text not null)`.execute(db);
  await db.insertInto('rows').values({ id: 1, note: 'one' }).execute();
  let started = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: waiting }, async () => {
      while (started < QUERIES) {
        started += 1;
        await db.selectFrom('rows').selectAll().where('id', '=', 1).executeTakeFirst();
      }
    }),
  );
  const used = process.cpuUsage(before);
  await db.destroy();
  return (used.user + used.system) / QUERIES;
}

let file = 0;
const database = async () => new SqliteDatabase(path.join(directory, `${file++}.db`));
console.log("| callers waiting | Kysely's SQLite dialect | queued dialect |");
console.log('|---|---|---|');
for (const waiting of [1, 8, 64, 256]) {
  const kysely = await cpuMicrosecondsPerQuery(new SqliteDialect({ database }), waiting);
  const queued = await cpuMicrosecondsPerQuery(new QueuedSqliteDialect({ database }), waiting);
  console.log(`| ${waiting} | ${kysely.toFixed(1)} µs | ${queued.toFixed(1)} µs |`);
}
fs.rmSync(directory, { recursive: true, force: true });
