import { randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import type { Database } from '../../src/store/schema.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { insertAccount } from '../../src/store/repositories/accounts.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { newId } from '../../src/domain/ids.ts';
import { newWhatsAppNumber, type WhatsAppNumber } from '../../src/domain/model.ts';
import type { E164 } from '../../src/domain/phone.ts';
import type { PlanName } from '../../src/domain/plans.ts';

export type Dialect = 'sqlite' | 'postgres';
/**
 * Both dialects, always, for `npm test`. Only `npm run test:fast` narrows this to SQLite (through
 * WAGW_TEST_DIALECTS, which scripts/test.sh clears), trading PostgreSQL coverage for a loop of
 * seconds while editing; CI runs the full suite.
 */
export const dialects: readonly Dialect[] = process.env.WAGW_TEST_DIALECTS === 'sqlite' ? ['sqlite'] : ['sqlite', 'postgres'];

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database of the dialect: a new SQLite file, or a new database on the
 * PostgreSQL server that scripts/test.sh started. A missing server fails the test run rather
 * than skipping, because every storage test must run on both dialects.
 */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const directory = fs.mkdtempSync(path.join(sqliteTestDirectory(), 'wagw-test-'));
    return {
      url: `sqlite:${path.join(directory, 'wagw.db')}`,
      drop: async () => fs.rmSync(directory, { recursive: true, force: true }),
    };
  }
  return createPostgresDatabase();
}

const MEMORY_DIRECTORY = '/dev/shm';
const MEMORY_DIRECTORY_MIN_FREE_BYTES = 1024 ** 3;

/**
 * Where the SQLite test databases live: WAGW_TEST_SQLITE_DIR if set, else a memory file system
 * (/dev/shm) when it has a gigabyte free, else the system's temporary folder.
 *
 * Each commit of the gateway fsyncs SQLite's log (synchronous=FULL), and on a disk that is what
 * the in-process tiers spent most of their SQLite time on: the fast tier took a sixth more CPU
 * and up to half again the wall time on /tmp. On tmpfs the same SQLite, with the same pragmas,
 * runs every statement and commit; only the fsync returns at once. No in-process test can tell
 * a power cut from a clean run anyway; the process tier's crash rounds kill real servers whose
 * data stays on disk. A container's default 64 MiB /dev/shm is too small, hence the floor.
 */
function sqliteTestDirectory(): string {
  const chosen = process.env.WAGW_TEST_SQLITE_DIR;
  if (chosen !== undefined && chosen !== '') return chosen;
  try {
    fs.accessSync(MEMORY_DIRECTORY, fs.constants.W_OK);
    const space = fs.statfsSync(MEMORY_DIRECTORY);
    if (space.bavail * space.bsize >= MEMORY_DIRECTORY_MIN_FREE_BYTES) return MEMORY_DIRECTORY;
  } catch {
    // No memory file system here (or not one this user may write to): the temporary folder serves.
  }
  return os.tmpdir();
}

/** A new database on the test server: empty, or a copy of `template`. */
async function createPostgresDatabase(template?: string): Promise<TestDatabase> {
  const serverUrl = postgresServerUrl();
  const name = `wagw_test_${randomBytes(6).toString('hex')}`;
  await withAdminClient(serverUrl, (client) =>
    client.query(template === undefined ? `create database ${name}` : `create database ${name} template ${template}`),
  );
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      withAdminClient(serverUrl, async (client) => {
        await waitForBackendsToLeave(client, name);
        await client.query(`drop database if exists ${name} with (force)`);
      }),
  };
}

function postgresServerUrl(): string {
  const serverUrl = process.env.WAGW_TEST_POSTGRES_URL;
  if (!serverUrl) {
    throw new Error('WAGW_TEST_POSTGRES_URL is not set: run the tests with `npm test`, which starts PostgreSQL.');
  }
  return serverUrl;
}

const BACKENDS_GONE_TIMEOUT_MS = 5_000;

/**
 * pg's Pool.end() resolves once it has asked its clients to disconnect, not once they have. A
 * forced drop in that gap terminates a closing backend, and its client raises an uncaught
 * "terminating connection due to administrator command" in whatever test runs next. Waiting
 * for the database's backends to leave closes the gap; the forced drop handles stragglers.
 */
async function waitForBackendsToLeave(client: pg.Client, database: string): Promise<void> {
  const deadline = Date.now() + BACKENDS_GONE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const result = await client.query<{ backends: number }>('select count(*)::int as backends from pg_stat_activity where datname = $1', [
      database,
    ]);
    if (result.rows[0]?.backends === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function withAdminClient<T>(serverUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database of the dialect with the latest schema: a copy of a template migrated once,
 * rather than a migration of its own, which on PostgreSQL costs about a second a database. The
 * copy is exactly what migrating gives (it is made by migrating); a test about migrations
 * themselves starts from createTestDatabase's empty one instead.
 */
export async function createMigratedTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const template = await sqliteTemplate();
    const database = await createTestDatabase('sqlite');
    fs.copyFileSync(template, database.url.slice('sqlite:'.length));
    return database;
  }
  const template = process.env.WAGW_TEST_POSTGRES_TEMPLATE;
  // Outside scripts/test.sh no run names a template, and no one would drop it: migrate instead.
  if (template === undefined) return migrated(await createTestDatabase('postgres'));
  postgresTemplateReady ??= ensurePostgresTemplate(template);
  await postgresTemplateReady;
  return createPostgresDatabase(template);
}

async function migrated(database: TestDatabase): Promise<TestDatabase> {
  const store = openStore(loadConfig({ DATABASE_URL: database.url }).database);
  try {
    await migrateToLatest(store.db, store.dialect);
  } finally {
    await store.close();
  }
  return database;
}

let sqliteTemplateFile: Promise<string> | undefined;

/** The process's migrated SQLite file to copy, removed when the process exits. */
function sqliteTemplate(): Promise<string> {
  sqliteTemplateFile ??= (async () => {
    const database = await migrated(await createTestDatabase('sqlite'));
    process.on('exit', () => void database.drop());
    return database.url.slice('sqlite:'.length);
  })();
  return sqliteTemplateFile;
}

let postgresTemplateReady: Promise<void> | undefined;

/**
 * Makes the run's PostgreSQL template (named by scripts/test.sh, which drops it) unless another
 * test process of the run made it first. Each maker migrates a database of its own and renames
 * it to the template's name, which only one can do; a loser drops its copy. A database being
 * renamed has no one connected, so a copy never starts from a half-migrated template.
 */
async function ensurePostgresTemplate(name: string): Promise<void> {
  const serverUrl = postgresServerUrl();
  const exists = (client: pg.Client) =>
    client.query('select 1 from pg_database where datname = $1', [name]).then((result) => result.rowCount === 1);
  if (await withAdminClient(serverUrl, exists)) return;
  const building = await migrated(await createTestDatabase('postgres'));
  const buildingName = new URL(building.url).pathname.slice(1);
  const renamed = await withAdminClient(serverUrl, async (client) => {
    await waitForBackendsToLeave(client, buildingName);
    try {
      await client.query(`alter database ${buildingName} rename to ${name}`);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === '42P04' /* duplicate_database */) return false;
      throw error;
    }
  });
  if (!renamed) await building.drop();
}

/** Drops the run's PostgreSQL template, for scripts/test.sh when the server is not its own throwaway one. */
export async function dropPostgresTemplate(): Promise<void> {
  const template = process.env.WAGW_TEST_POSTGRES_TEMPLATE;
  if (template === undefined) return;
  await withAdminClient(postgresServerUrl(), (client) => client.query(`drop database if exists ${template} with (force)`));
}

export interface MigratedTestStore {
  database: TestDatabase;
  store: Store;
  /** Closes the store and drops the database. */
  close(): Promise<void>;
}

/** A fresh database of the dialect, migrated, with a store open on it: what repository tests start from. */
export async function openMigratedTestStore(dialect: Dialect, env: Record<string, string> = {}): Promise<MigratedTestStore> {
  const database = await createMigratedTestDatabase(dialect);
  const store = openStore(loadConfig({ DATABASE_URL: database.url, ...env }).database);
  return {
    database,
    store,
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
}

let seededPhones = 0;

/**
 * An account with one number, written straight through the repositories, for storage tests that
 * need an owner for their rows. Each call gets a phone of its own within the process.
 */
export async function seedNumberRow(
  store: Store,
  overrides: Partial<WhatsAppNumber> = {},
  plan: PlanName = 'starter',
): Promise<WhatsAppNumber> {
  const at = new Date();
  const accountId = overrides.accountId ?? newId('account');
  if (overrides.accountId === undefined)
    await insertAccount(store.db, { id: accountId, name: 'Storage test', plan, customMonthlyLimit: null, createdAt: at });
  seededPhones += 1;
  const number = newWhatsAppNumber(
    {
      id: newId('number'),
      phone: `+4477009${String(process.pid % 100).padStart(2, '0')}${String(500 + seededPhones).padStart(3, '0')}` as E164,
      engine: 'sandbox',
      status: 'connected',
      ...overrides,
      accountId,
    },
    at,
  );
  await insertNumber(store.db, number);
  return number;
}

/** `db`, counting every statement run through it (a transaction's begin and commit are not statements). */
export function countingStatements(db: Kysely<Database>): { db: Kysely<Database>; statements: () => number } {
  let statements = 0;
  const counted = db.withPlugin({
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statements += 1;
      return args.result;
    },
  });
  return { db: counted, statements: () => statements };
}

/**
 * A migrated store of the dialect for the enclosing suite: opened before its first test, dropped
 * after its last. Read `.store` inside tests and hooks, once the suite has started.
 */
export function suiteStore(dialect: Dialect): { readonly store: Store } {
  let opened: MigratedTestStore | undefined;
  before(async () => {
    opened = await openMigratedTestStore(dialect);
  });
  after(() => opened?.close());
  return {
    get store(): Store {
      if (opened === undefined) throw new Error("The suite's store is read before the suite started.");
      return opened.store;
    },
  };
}

/** A stored message's times before anything happened to it: what a freshly written row reads back with. */
export const NO_TIMES = Object.freeze({ sent: null, delivered: null, read: null, failed: null, edited: null, revoked: null, unsent: null });
