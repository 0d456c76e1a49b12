/**
 * Failures of the database to take a write, as opposed to a write refused for its own reasons
 * (a constraint, a stale lease): a full disk, an I/O error, a read-only file, a PostgreSQL server
 * that is down or out of space. /health reports the store as unwritable while one is recent.
 */

/** How long a storage failure keeps /health at 503: past it, requests are let through to find out. */
export const UNWRITABLE_FOR_MS = 30_000;

/** SQLite's result codes (better-sqlite3's `code`) that mean the file cannot take writes. */
const SQLITE_STORAGE_CODES = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|PROTOCOL)/;
/**
 * PostgreSQL's SQLSTATEs that mean the server cannot take writes (class 08 connection exceptions,
 * 53 insufficient resources, 57P admin shutdown, 25006 a read-only server such as a standby), and the socket errors of a server gone away.
 */
const POSTGRES_STORAGE_CODES = /^(08|53|57P|25006)/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND']);
const CONNECTION_LOST = /Connection terminated|connection is closed|Client has encountered a connection error/i;

export function isStorageFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (SQLITE_STORAGE_CODES.test(code) || POSTGRES_STORAGE_CODES.test(code) || SOCKET_CODES.has(code))) return true;
  return CONNECTION_LOST.test(error.message);
}

export class WriteFailures {
  private last: { at: number; error: Error } | undefined;

  /** Notes a failed write if the database itself failed it; other errors are the write's own. */
  observe(error: unknown): void {
    if (isStorageFailure(error)) this.last = { at: Date.now(), error: error as Error };
  }

  /** The latest storage failure, if it is recent enough to say the store cannot write now. */
  recent(now = Date.now()): Error | undefined {
    return this.last !== undefined && now - this.last.at < UNWRITABLE_FOR_MS ? this.last.error : undefined;
  }
}
