import { sql, type QueryCreator } from 'kysely';
import { compiledStatement } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';

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
  const { rows } = limit === null ? await reserveUnlimitedUnit(db, { accountId, period }) : await reserveLimitedUnit(db, { accountId, period, limit });
  return rows.length > 0;
}

/**
 * The upsert that takes a unit, for the statements that take one; with `limited`, only while
 * the count is below `limit`. It returns the new count, or no row when no unit was left.
 */
export function takeUnitStatement(db: QueryCreator<Database>, v: { accountId: string; period: string; limit?: number }, limited: boolean) {
  return db
    .insertInto('monthly_usage')
    .values({ account_id: v.accountId, period: v.period, used: 1 })
    .onConflict((conflict) => {
      const update = conflict.columns(['account_id', 'period']).doUpdateSet({ used: sql`monthly_usage.used + 1` });
      return limited ? update.where('monthly_usage.used', '<', v.limit!) : update;
    })
    .returning('used');
}

// Every send takes a unit, so both forms are compiled once.
const reserveUnlimitedUnit = compiledStatement((db, v: { accountId: string; period: string }) => takeUnitStatement(db, v, false));
const reserveLimitedUnit = compiledStatement((db, v: { accountId: string; period: string; limit: number }) => takeUnitStatement(db, v, true));

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
