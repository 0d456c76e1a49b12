import type SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, SqliteDialect, SqliteDriver } from 'kysely';
import type { WalSync } from './wal-sync.ts';
import { isUrgent } from './urgent-lane.ts';

/**
 * Kysely's SQLite driver guards its one connection with a lock that, when released, wakes every
 * query waiting for it; all but one find it taken again and go back to waiting. Under load, with
 * dozens of requests waiting, each query's turn cost a wake-up of every other one: profiles of
 * the send path at saturation showed twice the CPU per request of the same path at a moderate
 * rate. This driver keeps the waiters in a queue and hands the connection to the next one only,
 * in arrival order, so the driver's own lock is never contended. Urgent work (urgent-lane.ts)
 * goes before everything waiting: it waits only for the holder of the moment.
 */
class QueuedSqliteDriver extends SqliteDriver {
  private readonly waiting: (() => void)[] = [];
  private readonly urgentWaiting: (() => void)[] = [];
  private held = false;

  override async acquireConnection(): Promise<DatabaseConnection> {
    if (this.held) await new Promise<void>((resolve) => (isUrgent() ? this.urgentWaiting : this.waiting).push(resolve));
    // Either the connection was free, or the previous holder handed it over and left `held` set.
    this.held = true;
    return super.acquireConnection();
  }

  /**
   * Kysely begins a deferred transaction, which takes the write lock only at its first write. In
   * WAL mode, if another process (the CLI, or a second gateway on the same file) committed after
   * such a transaction's first read, that upgrade fails at once with SQLITE_BUSY: the busy
   * timeout is never consulted, because waiting could not help a stale snapshot. Beginning
   * IMMEDIATE takes the write lock up front, where the busy timeout does apply. It costs nothing
   * within one process: this driver already runs one transaction at a time.
   */
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * SQLite rolls a transaction back by itself on some errors (a full disk, an I/O error). The
   * ROLLBACK that Kysely then issues fails with "cannot rollback - no transaction is active",
   * and Kysely throws that in place of the error that caused it, which hid every "database or
   * disk is full" behind it. With no transaction left there is nothing to roll back.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } catch (error) {
      if (!(error instanceof Error && NO_TRANSACTION.test(error.message))) throw error;
    }
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    const next = this.urgentWaiting.shift() ?? this.waiting.shift();
    if (next === undefined) this.held = false;
    else next();
  }
}

const NO_TRANSACTION = /no transaction is active/;

/** Opens the one connection when Kysely first needs it. */
interface OpenedBy {
  database: () => Promise<SqliteDatabase.Database>;
}

/** The connection, with its writes outside a transaction made to wait for the log's sync. */
class SyncingConnection implements DatabaseConnection {
  constructor(
    private readonly connection: DatabaseConnection,
    private readonly database: SqliteDatabase.Database,
    private readonly wal: WalSync,
  ) {}

  /** A write outside a transaction commits by itself, so it waits for the log's sync too. */
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.connection.executeQuery<R>(query);
    if (!this.database.inTransaction && !this.database.prepare(query.sql).readonly) await this.wal.sync();
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.connection.streamQuery<R>(query, chunkSize);
  }
}

/**
 * The queued driver for a connection in synchronous=NORMAL, where a commit writes SQLite's log
 * without syncing it (ADR 0037). Each commit is followed by a sync of the log on libuv's thread
 * pool, and the transaction's caller hears of the commit only once that sync is done. The
 * connection stays held until then: no statement of this process reads a commit before it is on
 * disk, so nothing acts on a write, or on a cache that its caller has yet to forget, before the
 * write is durable. The event loop is free meanwhile.
 */
class WalSyncingSqliteDriver extends QueuedSqliteDriver {
  /** The connection's better-sqlite3 handle, known once Kysely has opened it. */
  private readonly opened: { database?: SqliteDatabase.Database };

  constructor(
    config: OpenedBy,
    private readonly wal: WalSync,
  ) {
    const opened: { database?: SqliteDatabase.Database } = {};
    const open = config.database;
    super({
      ...config,
      database: async () => {
        const database = await open();
        opened.database = database;
        return database;
      },
    });
    this.opened = opened;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    return new SyncingConnection(await super.acquireConnection(), this.opened.database!, this.wal);
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
    await this.wal.sync();
  }

  override async destroy(): Promise<void> {
    await this.wal.close();
    await super.destroy();
  }
}

/**
 * Kysely's SQLite dialect with the queued driver in place of its own; given a WalSync, each
 * commit's log is synced off the event loop.
 */
export class QueuedSqliteDialect extends SqliteDialect {
  constructor(
    private readonly config: OpenedBy,
    private readonly wal?: WalSync,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return this.wal === undefined ? new QueuedSqliteDriver(this.config) : new WalSyncingSqliteDriver(this.config, this.wal);
  }
}
