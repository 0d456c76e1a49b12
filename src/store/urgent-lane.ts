import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Work whose lateness costs more than anyone else's: a node's lease renewal. Under load the
 * database's connections are all busy and every query waits its turn; a renewal that waits
 * behind thousands of requests is a node that stops trusting its own leases and stops every
 * session it runs (issue 37). Work run through `urgently` skips that wait: on SQLite it takes
 * the one connection before anything queued for it, on PostgreSQL it has a connection of its
 * own. Marked by the async context, so the repositories it calls need not know.
 */
const urgentContext = new AsyncLocalStorage<true>();

/** Runs `work` ahead of the database's queue. Only for small, rare work: the lane has room for one. */
export function urgently<T>(work: () => Promise<T>): Promise<T> {
  return urgentContext.run(true, work);
}

/** Whether the caller runs inside `urgently`: the drivers ask this as they hand out a connection. */
export function isUrgent(): boolean {
  return urgentContext.getStore() === true;
}
