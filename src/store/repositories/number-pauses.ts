import { isPauseReason, type NumberPause } from '../../domain/number-pauses.ts';
import type { Executor } from '../database.ts';
import type { NumberPausesTable } from '../schema-numbers.ts';

function toPause(row: Pick<NumberPausesTable, 'reason' | 'detail' | 'since_at' | 'until_at'>): NumberPause {
  return {
    // A reason this version does not know (written by a newer one) still holds the number.
    reason: isPauseReason(row.reason) ? row.reason : 'manual',
    detail: row.detail,
    since: new Date(Number(row.since_at)),
    until: row.until_at === null ? null : new Date(Number(row.until_at)),
  };
}

export async function findPause(db: Executor, numberId: string): Promise<NumberPause | undefined> {
  const row = await db.selectFrom('number_pauses').selectAll().where('number_id', '=', numberId).executeTakeFirst();
  return row && toPause(row);
}

/** The pauses of these numbers, by number id, in one statement per 500 ids; unpaused ones are absent. */
export async function findPauses(db: Executor, numberIds: readonly string[]): Promise<Map<string, NumberPause>> {
  const pauses = new Map<string, NumberPause>();
  for (let start = 0; start < numberIds.length; start += 500) {
    const rows = await db
      .selectFrom('number_pauses')
      .selectAll()
      .where('number_id', 'in', numberIds.slice(start, start + 500))
      .execute();
    for (const row of rows) pauses.set(row.number_id, toPause(row));
  }
  return pauses;
}

/** Pauses the number, or replaces its pause with the newer one. */
export async function savePause(db: Executor, numberId: string, pause: NumberPause): Promise<void> {
  const values = { reason: pause.reason, detail: pause.detail, since_at: pause.since.getTime(), until_at: pause.until?.getTime() ?? null };
  await db
    .insertInto('number_pauses')
    .values({ number_id: numberId, ...values })
    .onConflict((conflict) => conflict.column('number_id').doUpdateSet(values))
    .execute();
}

/** Ends the number's pause; false when it had none (another resume came first). */
export async function deletePause(db: Executor, numberId: string): Promise<boolean> {
  const result = await db.deleteFrom('number_pauses').where('number_id', '=', numberId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
