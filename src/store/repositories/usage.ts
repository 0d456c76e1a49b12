import { sql } from 'kysely';
import type { Executor } from '../database.ts';

/**
 * Takes one unit of an account's monthly volume, or reports that none is left.
 *
 * The check and the increment are one statement: the upsert's WHERE is evaluated under the row
 * lock that the conflict takes, so concurrent senders at the edge of the limit cannot both see
 * room for one more. `limit` null means unlimited, which still counts usage for the dashboard.
 */
export async function reserveMonthlyUnit(
  db: Executor,
  accountId: string,
  period: string,
  limit: number | null,
): Promise<boolean> {
  if (limit !== null && limit <= 0) return false;
  const reserved = await db
    .insertInto('monthly_usage')
    .values({ account_id: accountId, period, used: 1 })
    .onConflict((conflict) => {
      const update = conflict.columns(['account_id', 'period']).doUpdateSet({ used: sql`monthly_usage.used + 1` });
      return limit === null ? update : update.where('monthly_usage.used', '<', limit);
    })
    .returning('used')
    .executeTakeFirst();
  return reserved !== undefined;
}

/** Gives a unit back when a reserved send was not accepted by the engine. */
export async function releaseMonthlyUnit(db: Executor, accountId: string, period: string): Promise<void> {
  await db
    .updateTable('monthly_usage')
    .set({ used: sql`used - 1` })
    .where('account_id', '=', accountId)
    .where('period', '=', period)
    .where('used', '>', 0)
    .execute();
}

export async function monthlyUsed(db: Executor, accountId: string, period: string): Promise<number> {
  const row = await db
    .selectFrom('monthly_usage')
    .select('used')
    .where('account_id', '=', accountId)
    .where('period', '=', period)
    .executeTakeFirst();
  return row?.used ?? 0;
}
