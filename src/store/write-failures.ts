import { isStorageOutage } from './outage-errors.ts';

/**
 * Failures of the database to take a write, as opposed to a write refused for its own reasons
 * (a constraint, a stale lease): a full disk, an I/O error, a read-only file, a PostgreSQL server
 * that is down or out of space, as outage-errors.ts tells them. /health reports the store as
 * unwritable while one is recent.
 */

/** How long a storage failure keeps /health at 503: past it, requests are let through to find out. */
export const UNWRITABLE_FOR_MS = 30_000;

export class WriteFailures {
  private last: { at: number; error: Error } | undefined;

  /** Notes a failed write if the database itself failed it; other errors are the write's own. */
  observe(error: unknown): void {
    if (isStorageOutage(error)) this.last = { at: Date.now(), error: error as Error };
  }

  /** The latest storage failure, if it is recent enough to say the store cannot write now. */
  recent(now = Date.now()): Error | undefined {
    return this.last !== undefined && now - this.last.at < UNWRITABLE_FOR_MS ? this.last.error : undefined;
  }
}
