import type { DatabaseConnection, Dialect, Driver, QueryCompiler, TransactionSettings } from 'kysely';

/**
 * Which transaction, if any, each connection has open, as the driver begins and ends them.
 *
 * A compiled statement runs straight on its transaction's connection (compiled-statement.ts),
 * past Kysely's guard that refuses a transaction already committed or rolled back. The token
 * stands in for that guard: a new one is made at each begin and dropped as the commit or
 * rollback starts, so a statement of a finished transaction finds a different token (or none)
 * on the connection and goes back through Kysely, which throws as it always did. On SQLite the
 * one connection serves every transaction in turn, which is why a token, not a flag, is needed.
 */
const openTransactions = new WeakMap<DatabaseConnection, object>();

/** The token of the transaction open on `connection`; undefined when none is. */
export function openTransactionOf(connection: DatabaseConnection): object | undefined {
  return openTransactions.get(connection);
}

/** `dialect` with its driver noting each connection's open transaction. */
export function notingTransactions(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new TransactionNotingDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

type CompileQuery = QueryCompiler['compileQuery'];

class TransactionNotingDriver implements Driver {
  constructor(private readonly driver: Driver) {}

  init(): Promise<void> {
    return this.driver.init();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return this.driver.acquireConnection();
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.driver.beginTransaction(connection, settings);
    openTransactions.set(connection, {});
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    openTransactions.delete(connection);
    return this.driver.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    openTransactions.delete(connection);
    return this.driver.rollbackTransaction(connection);
  }

  // Both drivers the gateway uses have savepoints; the gateway itself takes none.
  savepoint(connection: DatabaseConnection, name: string, compileQuery: CompileQuery): Promise<void> {
    return this.driver.savepoint!(connection, name, compileQuery);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: CompileQuery): Promise<void> {
    return this.driver.rollbackToSavepoint!(connection, name, compileQuery);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: CompileQuery): Promise<void> {
    return this.driver.releaseSavepoint!(connection, name, compileQuery);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}
