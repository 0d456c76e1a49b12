import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../database.ts';

export interface AttemptCount {
  throttleKey: string;
  /** Attempts counted in the current window, this one included. */
  attempts: number;
  windowStartedAt: Date;
}

/**
 * Counts one attempt for a key and returns the new count, in one statement, so that parallel
 * attempts each see a distinct count. A window that began before `windowCutoff` starts over at
 * one, so an old burst never locks anyone out later.
 */
export async function countAttempt(db: Executor, throttleKey: string, at: Date, windowCutoff: Date): Promise<AttemptCount> {
  const cutoff = windowCutoff.getTime();
  const row = await db
    .insertInto('sign_in_failures')
    .values({ throttle_key: throttleKey, failures: 1, window_started_at: at.getTime() })
    .onConflict((conflict) =>
      conflict.column('throttle_key').doUpdateSet({
        failures: sql<number>`case when sign_in_failures.window_started_at < ${cutoff} then 1 else sign_in_failures.failures + 1 end`,
        window_started_at: sql<number>`case when sign_in_failures.window_started_at < ${cutoff} then ${at.getTime()} else sign_in_failures.window_started_at end`,
      }),
    )
    .returning(['failures', 'window_started_at'])
    .executeTakeFirstOrThrow();
  return { throttleKey, attempts: Number(row.failures), windowStartedAt: new Date(Number(row.window_started_at)) };
}

export interface DelayedAttempt {
  /** When a blocked attempt may be tried again; undefined when this attempt may go ahead. */
  refusedUntil: Date | undefined;
}

/**
 * A counter that makes its key wait a growing delay after each failure past the free ones:
 * `delaysMs[n]` is how long the key waits after its (n + 1)-th counted attempt, the last entry
 * repeating. An attempt that arrives while the key waits is refused and changes nothing, so
 * hammering does not lengthen the wait but gets nothing through either. One statement, so that
 * parallel attempts are decided one after another on the row.
 */
export async function countDelayedAttempt(
  db: Executor,
  throttleKey: string,
  at: Date,
  windowCutoff: Date,
  delaysMs: readonly number[],
): Promise<DelayedAttempt> {
  const now = at.getTime();
  const cutoff = windowCutoff.getTime();
  const expired = sql<boolean>`sign_in_failures.window_started_at < ${cutoff}`;
  const waiting = sql<boolean>`sign_in_failures.blocked_until > ${now}`;
  const row = await db
    .insertInto('sign_in_failures')
    .values({
      throttle_key: throttleKey,
      failures: 1,
      window_started_at: now,
      blocked_until: blockedUntilAfter(sql`1`, now, delaysMs),
      previous_blocked_until: 0,
    })
    .onConflict((conflict) =>
      conflict.column('throttle_key').doUpdateSet({
        failures: sql<number>`case when ${expired} then 1 when ${waiting} then sign_in_failures.failures else sign_in_failures.failures + 1 end`,
        window_started_at: sql<number>`case when ${expired} then ${now} else sign_in_failures.window_started_at end`,
        blocked_until: sql<number>`case when ${expired} then ${blockedUntilAfter(sql`1`, now, delaysMs)} when ${waiting} then sign_in_failures.blocked_until else ${blockedUntilAfter(sql`sign_in_failures.failures + 1`, now, delaysMs)} end`,
        // SET reads the row as it was, so this keeps what the attempt found.
        previous_blocked_until: sql<number>`case when ${expired} then 0 else sign_in_failures.blocked_until end`,
      }),
    )
    .returning(['previous_blocked_until'])
    .executeTakeFirstOrThrow();
  const found = Number(row.previous_blocked_until);
  return { refusedUntil: found > now ? new Date(found) : undefined };
}

/**
 * `now` plus the delay that follows the `failures`-th attempt, as one CASE over the schedule.
 * Every branch is cast, since PostgreSQL cannot infer a type for a CASE made only of parameters.
 */
function blockedUntilAfter(failures: RawBuilder<unknown>, now: number, delaysMs: readonly number[]): RawBuilder<number> {
  const until = (delayMs: number) => sql`cast(${delayMs === 0 ? 0 : now + delayMs} as bigint)`;
  const last = until(delaysMs.at(-1) ?? 0);
  if (delaysMs.length < 2) return sql<number>`${last}`;
  const steps = delaysMs.slice(0, -1).map((delayMs, index) => sql`when ${failures} = ${index + 1} then ${until(delayMs)}`);
  return sql<number>`case ${sql.join(steps, sql` `)} else ${last} end`;
}

/** Takes back one counted attempt, for an attempt that turned out to be a success. */
export async function uncountAttempt(db: Executor, throttleKey: string): Promise<void> {
  await db
    .updateTable('sign_in_failures')
    .set({ failures: sql<number>`case when failures > 0 then failures - 1 else 0 end` })
    .where('throttle_key', '=', throttleKey)
    .execute();
}

export async function clearAttempts(db: Executor, throttleKey: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('throttle_key', '=', throttleKey).execute();
}

/** Deletes counters whose window ended before `windowCutoff` and that hold no wait past `at`. */
export async function pruneAttempts(db: Executor, windowCutoff: Date, at: Date): Promise<number> {
  const result = await db
    .deleteFrom('sign_in_failures')
    .where('window_started_at', '<', windowCutoff.getTime())
    .where('blocked_until', '<=', at.getTime())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
