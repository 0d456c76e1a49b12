/**
 * Failures that say the store cannot be reached or cannot write at the moment, not that the
 * request or the code is wrong: the database server is down, restarting or refusing
 * connections, the network to it broke, or SQLite's disk is full, failing or locked past the
 * busy timeout. Such a request may well succeed when retried, so the API answers it with a
 * 503 and Retry-After (storage_unavailable) rather than a 500, and /health reports the store as
 * unwritable while such a failure of a write is recent (write-failures.ts).
 */
export function isStorageOutage(error: unknown): boolean {
  for (
    let cause = error, depth = 0;
    typeof cause === 'object' && cause !== null && depth < 5;
    cause = (cause as { cause?: unknown }).cause, depth++
  ) {
    if (isOutageCode((cause as { code?: unknown }).code) || isPoolOutageMessage((cause as { message?: unknown }).message)) return true;
  }
  return false;
}

/** Node's socket errors on the way to the database server. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/**
 * PostgreSQL: the server is shutting down or starting up (57P01-57P03), is read-only (25006, a
 * standby), or lacks a resource (class 53: out of connections, disk full, out of memory).
 */
const POSTGRES_CODES = new Set(['57P01', '57P02', '57P03', '25006']);

function isOutageCode(code: unknown): boolean {
  if (typeof code !== 'string') return false;
  if (SOCKET_CODES.has(code) || POSTGRES_CODES.has(code)) return true;
  // SQLSTATE class 08: connection exceptions.
  if (/^(08|53)[0-9A-Z]{3}$/.test(code)) return true;
  // better-sqlite3 reports the extended result code: SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT, …
  return /^SQLITE_(FULL|IOERR|BUSY|READONLY|CANTOPEN)/.test(code);
}

/** node-postgres says these in words only: a connection that ended under a query, or a pool that waited too long. */
function isPoolOutageMessage(message: unknown): boolean {
  return (
    typeof message === 'string' &&
    /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed)/i.test(
      message,
    )
  );
}
