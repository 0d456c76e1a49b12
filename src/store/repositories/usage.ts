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
export async function reserveMonthlyUnit(db: Executor, accountId: string, period: string, limit: number | null): Promise<boolean> {
  if (limit !== null && limit <= 0) return false;
  const { rows } =
    limit === null ? await reserveUnlimitedUnit(db, { accountId, period }) : await reserveLimitedUnit(db, { accountId, period, limit });
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
const reserveLimitedUnit = compiledStatement((db, v: { accountId: string; period: string; limit: number }) =>
  takeUnitStatement(db, v, true),
);

/**
 * Takes up to `wanted` units at once and returns how many it took: all of them when the limit
 * leaves room, the room that is left otherwise, none at the limit. For a batch of sends by one
 * account, in the batch's transaction, so that the usage row is locked by this one statement
 * and held only until the batch commits, rather than from the batch's first send.
 *
 * Limited plans read the count under the row's lock first (an upsert that changes nothing but
 * locks the row, and creates it at 0 the first time in a period); concurrent batches, on this or
 * another gateway, queue on that lock, so between them they never take more than the limit.
 */
export async function takeMonthlyUnits(
  db: Executor,
  accountId: string,
  period: string,
  limit: number | null,
  wanted: number,
): Promise<number> {
  if (wanted <= 0 || (limit !== null && limit <= 0)) return 0;
  if (limit === null) {
    await addUnits(db, { accountId, period, count: wanted });
    return wanted;
  }
  const { rows } = await lockedUsage(db, { accountId, period });
  const taken = Math.max(0, Math.min(wanted, limit - rows[0]!.used));
  if (taken > 0) await addUnits(db, { accountId, period, count: taken });
  return taken;
}

const lockedUsage = compiledStatement((db, v: { accountId: string; period: string }) =>
  db
    .insertInto('monthly_usage')
    .values({ account_id: v.accountId, period: v.period, used: 0 })
    .onConflict((conflict) => conflict.columns(['account_id', 'period']).doUpdateSet({ used: sql`monthly_usage.used` }))
    .returning('used'),
);

const addUnits = compiledStatement((db, v: { accountId: string; period: string; count: number }) =>
  db
    .insertInto('monthly_usage')
    .values({ account_id: v.accountId, period: v.period, used: v.count })
    .onConflict((conflict) => conflict.columns(['account_id', 'period']).doUpdateSet({ used: sql`monthly_usage.used + excluded.used` })),
);

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
