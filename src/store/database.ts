import fs from 'node:fs';
import { CachedLookups } from './cached-lookups.ts';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  sql,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import { preparedStatementName } from './compiled-statement.ts';
import type { Database } from './schema.ts';
import { QueuedSqliteDialect } from './sqlite-queued-driver.ts';
import { notingTransactions } from './open-transactions.ts';
import { handledElsewhere } from '../domain/promises.ts';
import { type FileSync, WalSync } from './wal-sync.ts';
import { isUrgent } from './urgent-lane.ts';

/** A query runner: the database itself or an open transaction. Repositories take either. */
export type Executor = Kysely<Database> | Transaction<Database>;

export interface Store {
  db: Kysely<Database>;
  dialect: DatabaseConfig['dialect'];
  /**
   * Runs a transaction whose commit survives a crash of the process but may be lost on power
   * loss, skipping the fsync. Only for writes whose loss is harmless, such as a delivery's
   * lease: lost, it lapses early and the delivery is claimed again.
   */
  transactionWithoutSync<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /** Undefined when the database answers a trivial query, otherwise what went wrong. */
  ping(): Promise<Error | undefined>;
  /**
   * Throws unless the settings a 200's promise rests on are in force: SQLite in WAL mode with
   * synchronous=FULL (NORMAL when the driver syncs the log on the thread pool) and foreign keys
   * on; PostgreSQL with synchronous_commit and fsync on. A start-up that cannot have them stops
   * with the reason instead of serving without them.
   */
  assertDurable(): Promise<void>;
  close(): Promise<void>;
  /** The hot reads held in memory for a moment (cached-lookups.ts); writers of what they hold tell it. */
  lookups: CachedLookups;
}

const PG_INT8_OID = 20;

/** What stands outside the store: tests slow down or fail the sync of SQLite's log through it. */
export interface StoreBoundaries {
  walFileSync?: FileSync;
}

export function openStore(config: DatabaseConfig, boundaries: StoreBoundaries = {}): Store {
  const db = config.dialect === 'sqlite' ? openSqlite(config, boundaries) : openPostgres(config);
  return {
    db,
    dialect: config.dialect,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return undefined;
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    },
    // SQLite has one connection: lowering its sync for one transaction would mean holding every
    // other writer off meanwhile, which costs more than the fsync saved. It gets a plain one.
    transactionWithoutSync: (work) => (config.dialect === 'postgres' ? postgresWithoutSync(db, work) : db.transaction().execute(work)),
    assertDurable: () => assertDurableSettings(db, config.dialect, durableSettings(config)),
    close: () => db.destroy(),
    lookups: new CachedLookups(db, config.dialect),
  };
}

/**
 * The settings the database must report, as `show`/`pragma` print them. SQLite whose log is
 * synced on the thread pool runs synchronous=NORMAL (1), the driver syncing after each commit.
 */
function durableSettings(config: DatabaseConfig): Record<string, string> {
  if (config.dialect === 'postgres') return { synchronous_commit: 'on', fsync: 'on' };
  return { journal_mode: 'wal', synchronous: config.commitSync === 'thread-pool' ? '1' : '2', foreign_keys: '1' };
}

async function assertDurableSettings(
  db: Kysely<Database>,
  dialect: DatabaseConfig['dialect'],
  settings: Record<string, string>,
): Promise<void> {
  const wrong: string[] = [];
  for (const [name, expected] of Object.entries(settings)) {
    // A fixed list of names, never input: they are written into the statement as identifiers.
    const statement = dialect === 'sqlite' ? sql`pragma ${sql.raw(name)}` : sql`show ${sql.raw(name)}`;
    const { rows } = await statement.execute(db);
    const actual = String(Object.values((rows[0] ?? {}) as Record<string, unknown>)[0] ?? '').toLowerCase();
    if (actual !== expected) wrong.push(`${name} is ${actual || 'unknown'}, not ${expected}`);
  }
  if (wrong.length > 0) {
    throw new Error(
      `The database does not keep commits durable (${wrong.join('; ')}), so the gateway will not start: a 200 promises that the data is on disk.`,
    );
  }
}

function postgresWithoutSync<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`set local synchronous_commit = off`.execute(trx);
    return work(trx);
  });
}

/**
 * The database holds hashed keys, sealed secrets and every message, so what the gateway creates
 * for it is private to the gateway's user: the folder 0700 and the file 0600. SQLite creates the
 * -wal and -shm files with the database file's permissions. An existing folder or file is left
 * as the operator made it.
 */
function createPrivately(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

function openSqlite(config: Extract<DatabaseConfig, { dialect: 'sqlite' }>, boundaries: StoreBoundaries): Kysely<Database> {
  const file = config.path;
  createPrivately(file);
  const onThreadPool = config.commitSync === 'thread-pool';
  return new Kysely<Database>({
    dialect: notingTransactions(
      new QueuedSqliteDialect(
        {
          database: async () => {
            const connection = new SqliteDatabase(file);
            // WAL with synchronous=FULL fsyncs the log on every commit, so a committed row
            // survives kill -9 and power loss; group commit keeps that cost per batch, not per row.
            // With NORMAL the driver does that fsync after the commit, on the thread pool (ADR 0037).
            connection.pragma('journal_mode = WAL');
            connection.pragma(onThreadPool ? 'synchronous = NORMAL' : 'synchronous = FULL');
            connection.pragma('foreign_keys = ON');
            // The CLI writes to the same file while the server runs; wait rather than fail.
            connection.pragma('busy_timeout = 5000');
            return withStatementCache(connection);
          },
        },
        onThreadPool ? new WalSync(`${file}-wal`, boundaries.walFileSync) : undefined,
      ),
    ),
  });
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query afresh, and preparing costs more than running a
 * small statement. The queries are a fixed set of shapes, so their prepared statements are kept
 * (bounded, oldest dropped first) and reused.
 */
function withStatementCache(connection: SqliteDatabase.Database): SqliteDatabase.Database {
  const cache = new Map<string, SqliteDatabase.Statement>();
  const prepare = connection.prepare.bind(connection);
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver);
      return (source: string) => {
        let statement = cache.get(source);
        if (statement === undefined) {
          statement = prepare(source);
          if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
          cache.set(source, statement);
        }
        return statement;
      };
    },
  });
}

function openPostgres(config: Extract<DatabaseConfig, { dialect: 'postgres' }>): Kysely<Database> {
  const pools = new LanedPool(newPostgresPool(config, config.poolSize), newPostgresPool(config, 1));
  return new Kysely<Database>({
    dialect: notingTransactions(new PostgresDialect({ pool: config.preparedStatements ? new NamingPool(pools) : pools })),
  });
}

function newPostgresPool(config: Extract<DatabaseConfig, { dialect: 'postgres' }>, size: number): pg.Pool {
  const { connectionString, preparedStatements } = config;
  const pool = new pg.Pool({
    connectionString,
    max: size,
    // Set by the server as each connection starts, whatever its own configuration says: a 200
    // promises a durable commit (checked at start by assertDurable), and a frozen node must not
    // hold row locks for long (see idleInTransactionTimeoutMs). Poolers that share server
    // connections between clients (prepared statements off) refuse per-client settings; there
    // the server's own must be right, and assertDurable stops a start where they are not.
    ...(preparedStatements && {
      options: `-c synchronous_commit=on -c idle_in_transaction_session_timeout=${config.idleInTransactionTimeoutMs}`,
    }),
    // Instants are stored as bigint milliseconds; read them back as numbers, not strings.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client can die (a server restart, a proxy timeout); the pool replaces it. Without a
  // listener that error would be uncaught and take the whole gateway down.
  pool.on('error', handledElsewhere);
  // The same for a client that is checked out when the server ends its session (it ended an
  // idle transaction of a node that was frozen, or restarted): the client's error event would
  // otherwise have no listener and end the process. Its pending and next queries fail instead,
  // and the pool drops it when it is released.
  pool.on('connect', (client) => client.on('error', handledElsewhere));
  return pool;
}

/** What Kysely and NamingPool need of a pool. */
interface ClientPool {
  connect(): Promise<pg.PoolClient>;
  end(): Promise<void>;
}

/**
 * The pool of requests, and beside it one connection for urgent work (urgent-lane.ts), so that
 * a lease renewal never waits for a pool that a burst of requests keeps busy.
 */
class LanedPool implements ClientPool {
  constructor(
    private readonly pool: pg.Pool,
    private readonly lane: pg.Pool,
  ) {}

  connect(): Promise<pg.PoolClient> {
    return (isUrgent() ? this.lane : this.pool).connect();
  }

  async end(): Promise<void> {
    await Promise.all([this.pool.end(), this.lane.end()]);
  }
}

/**
 * The pool as Kysely sees it, handing out clients that send the compiled statements
 * (src/store/compiled-statement.ts) with pg's own `name` option, so the server parses and plans
 * each once per connection. Every other query goes through as Kysely sent it.
 */
class NamingPool implements PostgresPool {
  constructor(private readonly pool: ClientPool) {}

  async connect(): Promise<PostgresPoolClient> {
    return new NamingClient(await this.pool.connect());
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

class NamingClient implements PostgresPoolClient {
  constructor(private readonly client: pg.PoolClient) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    textOrCursor: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof textOrCursor !== 'string') return this.client.query(textOrCursor as never) as PostgresCursor<R>;
    const values = [...(parameters ?? [])];
    const name = preparedStatementName(textOrCursor);
    const config: pg.QueryConfig = name === undefined ? { text: textOrCursor, values } : { name, text: textOrCursor, values };
    return this.client.query(config) as unknown as Promise<PostgresQueryResult<R>>;
  }

  release(): void {
    this.client.release();
  }
}
