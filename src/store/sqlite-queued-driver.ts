import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';

/**
 * Kysely's SQLite driver guards its one connection with a lock that, when released, wakes every
 * query waiting for it; all but one find it taken again and go back to waiting. Under load, with
 * dozens of requests waiting, each query's turn cost a wake-up of every other one: profiles of
 * the send path at saturation showed twice the CPU per request of the same path at a moderate
 * rate. This driver keeps the waiters in a queue and hands the connection to the next one only,
 * in arrival order, so the driver's own lock is never contended.
 */
class QueuedSqliteDriver extends SqliteDriver {
  private readonly waiting: (() => void)[] = [];
  private held = false;

  override async acquireConnection(): Promise<DatabaseConnection> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
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
    const next = this.waiting.shift();
    if (next === undefined) this.held = false;
    else next();
  }
}

const NO_TRANSACTION = /no transaction is active/;

/** Kysely's SQLite dialect with the queued driver in place of its own. */
export class QueuedSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    return new QueuedSqliteDriver(this.config);
  }
}
