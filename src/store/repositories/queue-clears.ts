// A clear of a number's send queue (ADR 0066): recorded once, then marked a batch at a time; and
// the conditions by which the queue's other statements pass over what a clear took.
import type { ExpressionBuilder } from 'kysely';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';

/**
 * A clear of the number's queue (ADR 0066): recorded once, whatever the queue's length. Every
 * message of the number waiting with created_at at or before `at` is from then on passed over by
 * the release, the due list, deferrals and the ledger's read (`notClearing`), and counted and
 * shown as `cancelling`; `markClearing` marks them a batch at a time and the runner settles what
 * is marked. Returns how many waiting messages the clear takes (those an earlier clear had not).
 * Run in the transaction that checks the owner's lease.
 */
export async function recordQueueClear(trx: Executor, numberId: string, at: Date): Promise<number> {
  const previous = await trx.selectFrom('queue_clears').select('cleared_through').where('number_id', '=', numberId).executeTakeFirst();
  // What an earlier clear took is told apart by its time, not by a lookup per row.
  const row = await trx
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('number_id', '=', numberId)
    .where('scheduled_for', 'is not', null)
    .where('created_at', '<=', at.getTime())
    .$if(previous !== undefined, (query) => query.where('created_at', '>', Number(previous!.cleared_through)))
    .where(notMarked)
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('queue_clears')
    .values({ number_id: numberId, cleared_through: at.getTime() })
    .onConflict((conflict) =>
      conflict
        .column('number_id')
        .doUpdateSet({ cleared_through: (eb) => eb.ref('excluded.cleared_through') })
        .where('queue_clears.cleared_through', '<', at.getTime()),
    )
    .execute();
  return Number(row.count);
}

/**
 * Marks up to `limit` of the messages a clear took and that are not marked yet: `wait_reason`
 * `cancelling`, and their expiry the mark's time, so that the queue runner's look for expired
 * messages (through the expiry index) settles them, on this node or on the next owner. Of one
 * number, or of the numbers the node holds that have a clear on record (only those are read, so
 * a pass of a node without one costs a probe). Returns how many were marked.
 */
export async function markClearing(
  db: Executor,
  scope: { numberId: string } | { nodeId: string },
  at: Date,
  limit: number,
): Promise<number> {
  const result = await db
    .updateTable('messages')
    .set({ wait_reason: CLEARING, expires_at: at.getTime() })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('queue_clears')
        .innerJoin('messages', 'messages.number_id', 'queue_clears.number_id')
        .select('messages.id')
        .$if('numberId' in scope, (query) => query.where('queue_clears.number_id', '=', (scope as { numberId: string }).numberId))
        .$if('nodeId' in scope, (query) =>
          query.where('queue_clears.number_id', 'in', (inner) =>
            inner
              .selectFrom('number_leases')
              .select('number_leases.number_id')
              .where('number_leases.node_id', '=', (scope as { nodeId: string }).nodeId),
          ),
        )
        .where('messages.scheduled_for', 'is not', null)
        .whereRef('messages.created_at', '<=', 'queue_clears.cleared_through')
        .where(notMarked)
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Forgets the clears of the node's numbers made before `before` whose messages are all marked:
 * the mark keeps those from leaving, so the record no longer has a use, and the runner's passes
 * stop reading the number's queue for it. The margin left by `before` covers a send admitted
 * before a clear whose row is written after it, with the batch it was in.
 */
export async function forgetFinishedClears(db: Executor, nodeId: string, before: Date): Promise<void> {
  await db
    .deleteFrom('queue_clears')
    .where('queue_clears.cleared_through', '<', before.getTime())
    .where('queue_clears.number_id', 'in', (eb) =>
      eb.selectFrom('number_leases').select('number_leases.number_id').where('number_leases.node_id', '=', nodeId),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('messages')
            .select('messages.id')
            .whereRef('messages.number_id', '=', 'queue_clears.number_id')
            .where('messages.scheduled_for', 'is not', null)
            .whereRef('messages.created_at', '<=', 'queue_clears.cleared_through')
            .where(notMarked),
        ),
      ),
    )
    .execute();
}

/** The wait reason of a message whose number's queue is being cleared. */
export const CLEARING = 'cancelling';

/** Waiting and neither marked by a clear nor taken by one: it may still leave. */
export function notClearing(eb: ExpressionBuilder<Database, 'messages'>) {
  return eb.and([notMarked(eb), eb.not(clearedAway(eb))]);
}

function notMarked(eb: ExpressionBuilder<Database, 'messages'>) {
  return eb.or([eb('messages.wait_reason', 'is', null), eb('messages.wait_reason', '<>', CLEARING)]);
}

/** Taken by a clear of its number (ADR 0066): created at or before the number's last clear. */
export function clearedAway(eb: ExpressionBuilder<Database, 'messages'>) {
  return eb.exists(
    eb
      .selectFrom('queue_clears')
      .select('queue_clears.number_id')
      .whereRef('queue_clears.number_id', '=', 'messages.number_id')
      .whereRef('queue_clears.cleared_through', '>=', 'messages.created_at'),
  );
}
