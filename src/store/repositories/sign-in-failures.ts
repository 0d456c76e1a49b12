import { sql } from 'kysely';
import type { Executor } from '../database.ts';

export interface FailureCount {
  throttleKey: string;
  failures: number;
  windowStartedAt: Date;
}

export async function findFailureCounts(db: Executor, throttleKeys: string[]): Promise<FailureCount[]> {
  const rows = await db.selectFrom('sign_in_failures').selectAll().where('throttle_key', 'in', throttleKeys).execute();
  return rows.map((row) => ({ throttleKey: row.throttle_key, failures: row.failures, windowStartedAt: new Date(Number(row.window_started_at)) }));
}

/**
 * Counts one failure for each key in one statement per key. A window that began before
 * `windowCutoff` starts over at one, so an old burst never locks anyone out later.
 */
export async function recordFailure(db: Executor, throttleKeys: string[], at: Date, windowCutoff: Date): Promise<void> {
  for (const throttleKey of throttleKeys) {
    await db
      .insertInto('sign_in_failures')
      .values({ throttle_key: throttleKey, failures: 1, window_started_at: at.getTime() })
      .onConflict((conflict) =>
        conflict.column('throttle_key').doUpdateSet({
          failures: sql<number>`case when sign_in_failures.window_started_at < ${windowCutoff.getTime()} then 1 else sign_in_failures.failures + 1 end`,
          window_started_at: sql<number>`case when sign_in_failures.window_started_at < ${windowCutoff.getTime()} then ${at.getTime()} else sign_in_failures.window_started_at end`,
        }),
      )
      .execute();
  }
}

export async function clearFailures(db: Executor, throttleKey: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('throttle_key', '=', throttleKey).execute();
}
