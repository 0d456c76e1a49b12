import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import { preparedStatementName } from './compiled-statement.ts';
import type { Database } from './schema.ts';
import { QueuedSqliteDialect } from './sqlite-queued-driver.ts';

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
  close(): Promise<void>;
}

const PG_INT8_OID = 20;

export function openStore(config: DatabaseConfig): Store {
  const db = config.dialect === 'sqlite' ? openSqlite(config.path) : openPostgres(config.connectionString, config.poolSize, config.preparedStatements);
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
    close: () => db.destroy(),
  };
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

function openSqlite(file: string): Kysely<Database> {
  createPrivately(file);
  return new Kysely<Database>({
    dialect: new QueuedSqliteDialect({
      database: async () => {
        const connection = new SqliteDatabase(file);
        // WAL with synchronous=FULL fsyncs the log on every commit, so a committed row
        // survives kill -9 and power loss; group commit keeps that cost per batch, not per row.
        connection.pragma('journal_mode = WAL');
        connection.pragma('synchronous = FULL');
        connection.pragma('foreign_keys = ON');
        // The CLI writes to the same file while the server runs; wait rather than fail.
        connection.pragma('busy_timeout = 5000');
        return withStatementCache(connection);
      },
    }),
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

function openPostgres(connectionString: string, poolSize: number, preparedStatements: boolean): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // Instants are stored as bigint milliseconds; read them back as numbers, not strings.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client can die (a server restart, a proxy timeout); the pool replaces it. Without a
  // listener that error would be uncaught and take the whole gateway down.
  pool.on('error', () => {});
  // A 200 promises a durable commit, so it must not depend on how the server is configured.
  pool.on('connect', (client) => {
    client.query('set synchronous_commit = on').catch(() => {});
    if (preparedStatements) prepareCompiledStatements(client);
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Sends the compiled statements (src/store/compiled-statement.ts) as named queries, which the
 * server prepares once per connection. Kysely passes every query as (text, values); the others
 * go through unchanged.
 */
function prepareCompiledStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 && Array.isArray(values) ? preparedStatementName(text) : undefined;
    return name === undefined ? query(...args) : query({ name, text, values });
  }) as typeof client.query;
}
