import { sql } from 'kysely';
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
