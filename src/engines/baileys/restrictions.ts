import type { ConnectionState } from 'baileys';

/** WhatsApp's code for a send from a restricted account (an ack's error, or a send's Boom status). */
export const ACCOUNT_RESTRICTED_CODE = '463';

/**
 * How long a number rate-limited on a send (rate-overlimit, 429) holds its sends: WhatsApp does
 * not say, and sending on into the limit is what turns a limit into a ban.
 */
export const RATE_LIMIT_PAUSE_MS = 60_000;

/** What Baileys' `reachoutTimeLock` (connection.update) says of the number, in the engine port's terms. */
export type TimelockNews = { kind: 'locked'; until: Date | null; detail: string | null } | { kind: 'lifted' };

/**
 * Baileys reports the reach-out time lock on connection.update, from WhatsApp's notification or
 * its answer to fetchAccountReachoutTimelock: active with the time it ends (and the kind of
 * enforcement), or inactive once lifted.
 */
export function timelockNews(update: Partial<ConnectionState>): TimelockNews | undefined {
  const lock = update.reachoutTimeLock;
  if (lock === undefined) return undefined;
  if (lock.isActive !== true) return { kind: 'lifted' };
  const ends = lock.timeEnforcementEnds;
  const until = ends instanceof Date && !Number.isNaN(ends.getTime()) ? ends : null;
  return { kind: 'locked', until, detail: lock.enforcementType ?? null };
}
