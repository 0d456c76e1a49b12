// The send queue read: which waiting messages are due, expired or being cleared on a node's
// numbers, in the order they leave, and the queue's pages and counts for its views and metrics.
import { sql } from 'kysely';
import type { Executor } from '../database.ts';
import { CLEARING, clearedAway, notClearing } from './queue-clears.ts';
import type { QueuedOptions } from './send-queue.ts';

/** Up to `limit` of the number's messages marked by a clear and not yet settled. */
export async function listClearingOf(db: Executor, numberId: string, limit: number): Promise<WaitingMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .select(WAITING_COLUMNS)
    .where('messages.number_id', '=', numberId)
    .where('messages.scheduled_for', 'is not', null)
    .where('messages.wait_reason', '=', CLEARING)
    .limit(limit)
    .execute();
  return rows.map(toWaiting);
}

/** A waiting message as the runner and the queue view read it. */
export interface WaitingMessage {
  id: string;
  accountId: string;
  numberId: string;
  toPhone: string;
  scheduledFor: Date;
  expiresAt: Date | null;
  waitReason: string;
  createdAt: Date;
  firstContact: boolean;
  /** The text's length in characters, for the typing shown before it (read only where due). */
  textLength: number;
  options: QueuedOptions | null;
}

const WAITING_COLUMNS = [
  'messages.id',
  'messages.account_id',
  'messages.number_id',
  'messages.to_phone',
  'messages.scheduled_for',
  'messages.expires_at',
  'messages.wait_reason',
  'messages.created_at',
  'messages.queued_options',
  'messages.first_contact',
] as const;

type WaitingRow = {
  text_length?: number | string | null;
  id: string;
  account_id: string;
  number_id: string | null;
  to_phone: string;
  scheduled_for: number | null;
  expires_at: number | null;
  wait_reason: string | null;
  created_at: number;
  queued_options: string | null;
  first_contact: number | null;
};

function toWaiting(row: WaitingRow): WaitingMessage {
  return {
    id: row.id,
    accountId: row.account_id,
    numberId: row.number_id!,
    toPhone: row.to_phone,
    scheduledFor: new Date(Number(row.scheduled_for)),
    expiresAt: row.expires_at === null ? null : new Date(Number(row.expires_at)),
    waitReason: row.wait_reason ?? 'gap',
    createdAt: new Date(Number(row.created_at)),
    firstContact: row.first_contact === 1,
    textLength: Number(row.text_length ?? 0),
    options: row.queued_options === null ? null : (JSON.parse(row.queued_options) as QueuedOptions),
  };
}

/**
 * Waiting messages due by `now` on the numbers the node holds, leaving out the numbers in `busy`
 * (the runner is still serving them). Taken in turns: every number's oldest due message comes
 * before any number's second, so one number's backlog never fills the batch and keeps another
 * number's due message out of it (ADR 0042).
 */
export async function listDueOnNode(
  db: Executor,
  nodeId: string,
  now: Date,
  limit: number,
  busy: readonly string[] = [],
): Promise<WaitingMessage[]> {
  const ranked = db
    .selectFrom('messages')
    .innerJoin('number_leases', 'number_leases.number_id', 'messages.number_id')
    .select(WAITING_COLUMNS)
    .select(sql<number>`length(messages.text)`.as('text_length'))
    .select(sql<number>`row_number() over (partition by messages.number_id order by messages.scheduled_for, messages.id)`.as('turn'))
    .where('number_leases.node_id', '=', nodeId)
    .where('messages.scheduled_for', 'is not', null)
    .where('messages.scheduled_for', '<=', now.getTime())
    .where(notClearing)
    .$if(busy.length > 0, (query) => query.where('messages.number_id', 'not in', busy));
  const rows = await db
    .selectFrom(ranked.as('due'))
    .selectAll()
    .orderBy('turn')
    .orderBy('scheduled_for')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toWaiting);
}

/** Waiting messages past their expiry on the numbers the node holds. */
export async function listExpiredOnNode(db: Executor, nodeId: string, now: Date, limit: number): Promise<WaitingMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .innerJoin('number_leases', 'number_leases.number_id', 'messages.number_id')
    .select(WAITING_COLUMNS)
    .where('number_leases.node_id', '=', nodeId)
    .where('messages.scheduled_for', 'is not', null)
    .where('messages.expires_at', '<=', now.getTime())
    .limit(limit)
    .execute();
  return rows.map(toWaiting);
}

/**
 * The earliest time anything is due on the node's numbers (a release or an expiry); null when
 * nothing waits. One index probe per held number for each of the two, through the partial
 * indexes: the one timer of the node sleeps until then.
 */
export async function nextDueOnNode(db: Executor, nodeId: string): Promise<Date | null> {
  const row = await db
    .selectFrom('number_leases as lease')
    .select([
      sql<
        number | string | null
      >`min((select min(m.scheduled_for) from messages m where m.number_id = lease.number_id and m.scheduled_for is not null))`.as('due'),
      sql<
        number | string | null
      >`min((select min(m.expires_at) from messages m where m.number_id = lease.number_id and m.scheduled_for is not null))`.as('expiry'),
    ])
    .where('lease.node_id', '=', nodeId)
    .executeTakeFirst();
  const times = [row?.due, row?.expiry].filter((value) => value !== null && value !== undefined).map(Number);
  return times.length === 0 ? null : new Date(Math.min(...times));
}

/**
 * One page of the number's queue in the order it will leave, after `after` (scheduled_for and
 * id); a message a clear took shows as `cancelling` before the runner has marked it.
 */
export async function listWaitingPage(
  db: Executor,
  numberId: string,
  limit: number,
  after?: { scheduledFor: number; id: string },
  offset = 0,
): Promise<WaitingMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .select(WAITING_COLUMNS)
    .select((eb) => eb.case().when(clearedAway(eb)).then(1).else(0).end().as('cleared'))
    .where('messages.number_id', '=', numberId)
    .where('messages.scheduled_for', 'is not', null)
    .$if(after !== undefined, (query) =>
      query.where((eb) =>
        eb.or([
          eb('messages.scheduled_for', '>', after!.scheduledFor),
          eb.and([eb('messages.scheduled_for', '=', after!.scheduledFor), eb('messages.id', '>', after!.id)]),
        ]),
      ),
    )
    .orderBy('messages.scheduled_for')
    .orderBy('messages.id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map((row) => (Number(row.cleared) === 1 ? { ...toWaiting(row), waitReason: CLEARING } : toWaiting(row)));
}

/** How many of the number's messages wait, for each reason; those a clear took count as `cancelling`. */
export async function countWaitingByReason(db: Executor, numberId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('messages')
    .select((eb) => [
      'wait_reason',
      eb.case().when(clearedAway(eb)).then(1).else(0).end().as('cleared'),
      eb.fn.countAll<number | string>().as('count'),
    ])
    .where('number_id', '=', numberId)
    .where('scheduled_for', 'is not', null)
    .groupBy(['wait_reason', 'cleared'])
    .execute();
  const counts: Record<string, number> = {};
  for (const row of rows) {
    const reason = Number(row.cleared) === 1 ? CLEARING : (row.wait_reason ?? 'gap');
    counts[reason] = (counts[reason] ?? 0) + Number(row.count);
  }
  return counts;
}

/** The waiting messages of the whole gateway and the oldest one's age, for the metrics scrape. */
export async function queueTotals(db: Executor): Promise<{ depth: number; oldestCreatedAt: Date | null; overdue: number; now: number }> {
  const now = Date.now();
  const row = await db
    .selectFrom('messages')
    .select([
      (eb) => eb.fn.countAll<number | string>().as('depth'),
      (eb) => eb.fn.min('created_at').as('oldest'),
      sql<number | string>`coalesce(sum(case when scheduled_for <= ${now} then 1 else 0 end), 0)`.as('overdue'),
    ])
    .where('scheduled_for', 'is not', null)
    .executeTakeFirstOrThrow();
  return {
    depth: Number(row.depth),
    oldestCreatedAt: row.oldest === null ? null : new Date(Number(row.oldest)),
    overdue: Number(row.overdue),
    now,
  };
}

/** When the number's longest-waiting message was made; null when nothing waits. */
export async function oldestWaitingSince(db: Executor, numberId: string): Promise<Date | null> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.min('created_at').as('oldest'))
    .where('number_id', '=', numberId)
    .where('scheduled_for', 'is not', null)
    .executeTakeFirst();
  return row?.oldest == null ? null : new Date(Number(row.oldest));
}
