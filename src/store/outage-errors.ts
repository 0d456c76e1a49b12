/**
 * Failures that say the store cannot be reached or cannot write at the moment, not that the
 * request or the code is wrong: the database server is down, restarting or refusing
 * connections, the network to it broke, or SQLite's disk is full, failing or locked past the
 * busy timeout. Such a request may well succeed when retried, so the API answers it with a
 * 503 and Retry-After (storage_unavailable) rather than a 500.
 */
export function isStorageOutage(error: unknown): boolean {
  for (let cause = error, depth = 0; typeof cause === 'object' && cause !== null && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (isOutageCode((cause as { code?: unknown }).code) || isPoolOutageMessage((cause as { message?: unknown }).message)) return true;
  }
  return false;
}

/** Node's socket errors on the way to the database server. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** PostgreSQL: the server is shutting down or starting up (57P01-57P03), or is out of connections (53300). */
const POSTGRES_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

function isOutageCode(code: unknown): boolean {
  if (typeof code !== 'string') return false;
  if (SOCKET_CODES.has(code) || POSTGRES_CODES.has(code)) return true;
  // SQLSTATE class 08: connection exceptions.
  if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  // better-sqlite3 reports the extended result code: SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT, …
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_BUSY');
}

/** node-postgres says these in words only: a connection that ended under a query, or a pool that waited too long. */
function isPoolOutageMessage(message: unknown): boolean {
  return typeof message === 'string' && /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(message);
}
