import { PostgresAdapter, type Compilable, type CompiledQuery, type DatabaseConnection, type Kysely, type QueryResult } from 'kysely';
import { openTransactionOf } from './open-transactions.ts';
import type { Database } from './schema.ts';
import type { Executor } from './database.ts';

/**
 * A statement that Kysely builds and compiles once per database, then runs with new values.
 *
 * Kysely builds an operation tree and compiles it to SQL on every call, which on the send path
 * cost more CPU than SQLite took to run the statements (a fifth of the gateway's time in the
 * send benchmark). The hot statements are fixed in shape, so they are compiled once, with a
 * unique marker standing in for each named value, and each later call swaps its values in for
 * the markers. Kysely stays the only SQL builder; this only skips rebuilding the same query.
 *
 * The rules for `build`: the values are one flat object, and it may use them only whole (in
 * `where`, `values`, `set`), never to choose the query's shape or to compute another value,
 * since at compile time each one is a marker string. A marker found inside a larger value, or a
 * parameter that is undefined (a property read of a marker), breaks the rules and throws.
 */
export function compiledStatement<Values extends Record<string, unknown>, Row>(
  build: (db: Kysely<Database>, values: Values) => Compilable<Row>,
): (db: Executor, values: Values) => Promise<QueryResult<Row>> {
  const templates = new WeakMap<object, Template<Row>>();
  return async (db, values) => {
    const dialectKey = dialectKeyOf(db);
    let template = dialectKey === undefined ? undefined : templates.get(dialectKey);
    if (template === undefined) {
      template = compileTemplate(db, build);
      if (dialectKey !== undefined) templates.set(dialectKey, template);
    }
    const parameters = template.compiled.parameters.map((constant, index) => {
      const name = template.valueAt[index];
      return name === undefined ? constant : values[name];
    });
    return runOnConnection(db, { ...template.compiled, parameters });
  };
}

/** Per open transaction (its executor), the connection it holds and the token of its transaction there. */
const transactionConnections = new WeakMap<object, { connection: DatabaseConnection; transaction: object }>();

/**
 * Runs a compiled query on the connection `db` is bound to, without Kysely's executor around
 * it: the executor's layers (its connection provider's queue, the committed-transaction guard,
 * the result plugins) add about half again to a small statement on SQLite (ADR 0011). The
 * connection's own `executeQuery` still runs it, so the errors (constraint, outage) and the
 * result (`rows`, `numAffectedRows`) are exactly what Kysely would have passed on.
 *
 * Within a transaction, the connection is asked for once and then reused while that same
 * transaction is open on it (open-transactions.ts); the statement then runs inside the
 * transaction, in the order it was issued. Outside one, the connection is taken and given back
 * as every query's is, so on SQLite the queued driver still runs one thing at a time.
 *
 * A database with plugins (tests count or refuse statements with them) keeps Kysely's executor,
 * since a plugin may change what a result looks like.
 */
async function runOnConnection<Row>(db: Executor, query: CompiledQuery<Row>): Promise<QueryResult<Row>> {
  const executor = db.getExecutor();
  if (executor.plugins.length > 0) return db.executeQuery<Row>(query);
  const held = transactionConnections.get(executor);
  if (held !== undefined && openTransactionOf(held.connection) === held.transaction) return held.connection.executeQuery<Row>(query);
  return executor.provideConnection((connection) => {
    const transaction = openTransactionOf(connection);
    if (db.isTransaction && transaction !== undefined) transactionConnections.set(executor, { connection, transaction });
    return connection.executeQuery<Row>(query);
  });
}

interface Template<Row> {
  compiled: CompiledQuery<Row>;
  /** For each parameter of the compiled query, the name of the value it takes; undefined for a constant. */
  valueAt: (string | undefined)[];
}

const MARKER_START = '\u0000wagw-value:';
const MARKER_END = '\u0000';

function compileTemplate<Values extends Record<string, unknown>, Row>(
  db: Executor,
  build: (db: Kysely<Database>, values: Values) => Compilable<Row>,
): Template<Row> {
  // Every property read of the stand-in answers with that property's marker.
  const markers = new Proxy({} as Values, {
    get: (_target, name) => `${MARKER_START}${String(name)}${MARKER_END}`,
  });
  const compiled = build(db, markers).compile();
  if (compiled.sql.includes(MARKER_START)) throw new Error(`A compiled statement put a value into its SQL text: ${compiled.sql}`);
  const valueAt = compiled.parameters.map((parameter) => {
    if (parameter === undefined)
      throw new Error(`A compiled statement read a value that is not one of its top-level names: ${compiled.sql}`);
    if (typeof parameter !== 'string' || !parameter.includes(MARKER_START)) return undefined;
    if (!parameter.startsWith(MARKER_START) || parameter.indexOf(MARKER_END, MARKER_START.length) !== parameter.length - 1) {
      throw new Error(`A compiled statement used a value inside another value: ${compiled.sql}`);
    }
    return parameter.slice(MARKER_START.length, -MARKER_END.length);
  });
  if (!preparedNames.has(compiled.sql)) preparedNames.set(compiled.sql, `wagw_${preparedNames.size + 1}`);
  return { compiled, valueAt };
}

/**
 * A name for each compiled statement's SQL. On PostgreSQL, a query sent with a name is parsed and
 * planned once per connection and then only bound and run, which saves the server more work than
 * the compiling above saves the gateway. Only compiled statements get names: they are a fixed,
 * small set, while naming every query (IN lists, multi-row inserts) would grow each connection's
 * prepared statements without bound.
 */
const preparedNames = new Map<string, string>();

export function preparedStatementName(sqlText: string): string | undefined {
  return preparedNames.get(sqlText);
}

/**
 * Transactions compile exactly like the database they belong to, and share its dialect adapter,
 * so the adapter keys the cache. (`withSchema` or `withPlugin` would share it too while compiling
 * differently; the gateway uses neither, and a compiled statement must not be run through them.) `getExecutor` is marked internal in Kysely (pinned through the
 * lockfile); without it every call compiles afresh, which is slower but still correct.
 */
function dialectKeyOf(db: Executor): object | undefined {
  const withExecutor = db as unknown as { getExecutor?: () => { adapter?: object } };
  return withExecutor.getExecutor?.().adapter;
}

/**
 * Whether statements on `db` run on PostgreSQL, for the repositories that write several tables
 * in one statement there (a round trip saved) and in several on SQLite, which has no writing
 * CTEs and no round trips to save. Unknown counts as no: the several-statement form is correct
 * on both.
 */
export function runsOnPostgres(db: Executor): boolean {
  return dialectKeyOf(db) instanceof PostgresAdapter;
}
