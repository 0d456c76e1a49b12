import { sql, type Kysely, type QueryCreator, type RawBuilder } from 'kysely';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';
import { notClearing } from './queue-clears.ts';

/**
 * The send governor's queue, which is the messages table (ADR 0029): a waiting message is
 * `queued` with `scheduled_for`; `released_at` marks the sends the governor let go, which are
 * the number's history its caps count. This file holds the queue's writes; its reads are in
 * waiting-messages.ts, its clears in queue-clears.ts and the history the caps count in send-ledger.ts.
 */

/** What a governed send stores beside its row. */
export interface GovernedFields {
  /** Null when the governor lets it go at once. */
  scheduledFor: Date | null;
  expiresAt: Date | null;
  waitReason: string | null;
  releasedAt: Date | null;
  firstContact: boolean;
  options: QueuedOptions | null;
}

/** What a waiting message needs at release that its row does not hold. */
export interface QueuedOptions {
  mentions?: readonly string[];
  reply_to?: string;
}

/**
 * What the governor decided for each of a batch's governed sends, written on their rows once the
 * rows are stored: one statement for the whole batch (unnest on PostgreSQL, json_each on SQLite,
 * as status-rows.ts does), so that a number's sends written together cost one round trip here.
 */
export async function setGovernedFields(trx: Executor, decided: ReadonlyMap<string, GovernedFields>): Promise<void> {
  if (decided.size === 0) return;
  const rows = [...decided].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, fields]) => governedRow(id, fields));
  if (runsOnPostgres(trx)) {
    const column = <Name extends keyof GovernedRow>(name: Name) => rows.map((row) => row[name]);
    await setGovernedPostgres(trx, {
      ids: column('i'),
      scheduledFor: column('s'),
      expiresAt: column('x'),
      waitReason: column('w'),
      releasedAt: column('r'),
      firstContact: column('f'),
      options: column('o'),
    });
  } else await setGovernedSqlite(trx, { rows: JSON.stringify(rows) });
}

interface GovernedRow {
  i: string;
  s: number | null;
  x: number | null;
  w: string | null;
  r: number | null;
  f: number;
  o: string | null;
}

function governedRow(id: string, fields: GovernedFields): GovernedRow {
  return {
    i: id,
    s: fields.scheduledFor?.getTime() ?? null,
    x: fields.expiresAt?.getTime() ?? null,
    w: fields.waitReason,
    r: fields.releasedAt?.getTime() ?? null,
    f: fields.firstContact ? 1 : 0,
    o: fields.options === null ? null : JSON.stringify(fields.options),
  };
}

type GovernedColumns = {
  ids: string[];
  scheduledFor: (number | null)[];
  expiresAt: (number | null)[];
  waitReason: (string | null)[];
  releasedAt: (number | null)[];
  firstContact: number[];
  options: (string | null)[];
};

const setGovernedPostgres = compiledStatement((db, v: GovernedColumns) =>
  setGovernedFrom(
    db.with('decided', (cte) =>
      cte.selectNoFrom([
        sql<string>`unnest(cast(${v.ids} as text[]))`.as('id'),
        sql<number | null>`unnest(cast(${v.scheduledFor} as bigint[]))`.as('scheduled_for'),
        sql<number | null>`unnest(cast(${v.expiresAt} as bigint[]))`.as('expires_at'),
        sql<string | null>`unnest(cast(${v.waitReason} as text[]))`.as('wait_reason'),
        sql<number | null>`unnest(cast(${v.releasedAt} as bigint[]))`.as('released_at'),
        sql<number>`unnest(cast(${v.firstContact} as int[]))`.as('first_contact'),
        sql<string | null>`unnest(cast(${v.options} as text[]))`.as('queued_options'),
      ]),
    ),
  ),
);

const setGovernedSqlite = compiledStatement((db, v: { rows: string }) =>
  setGovernedFrom(
    db.with('decided', (cte) =>
      cte
        .selectFrom(sql`json_each(${v.rows})`.as('r'))
        .select([
          sql<string>`r.value ->> 'i'`.as('id'),
          sql<number | null>`r.value ->> 's'`.as('scheduled_for'),
          sql<number | null>`r.value ->> 'x'`.as('expires_at'),
          sql<string | null>`r.value ->> 'w'`.as('wait_reason'),
          sql<number | null>`r.value ->> 'r'`.as('released_at'),
          sql<number>`r.value ->> 'f'`.as('first_contact'),
          sql<string | null>`r.value ->> 'o'`.as('queued_options'),
        ]),
    ),
  ),
);

type DecidedTable = {
  decided: {
    id: string;
    scheduled_for: number | null;
    expires_at: number | null;
    wait_reason: string | null;
    released_at: number | null;
    first_contact: number;
    queued_options: string | null;
  };
};

/** The one update of both dialects, over the rows their `decided` table expression unpacks. */
function setGovernedFrom(withDecided: QueryCreator<Database & DecidedTable>) {
  return withDecided
    .updateTable('messages')
    .from('decided')
    .set((eb) => ({
      scheduled_for: eb.ref('decided.scheduled_for'),
      expires_at: eb.ref('decided.expires_at'),
      wait_reason: eb.ref('decided.wait_reason'),
      released_at: eb.ref('decided.released_at'),
      first_contact: eb.ref('decided.first_contact'),
      queued_options: eb.ref('decided.queued_options'),
    }))
    .whereRef('messages.id', '=', 'decided.id');
}

/**
 * The release: the waiting state is cleared and the release time set, only over messages still
 * waiting; returns the ids released. Run in the transaction that checks the owner's lease,
 * before the engine is asked: a crash after it leaves a `queued` row without `scheduled_for`,
 * which the interrupted-send sweep makes `unknown`, never a second send. One statement for any
 * number of messages, its text the same for every batch (see status-rows.ts).
 */
export async function releaseWaitingRows(db: Executor, ids: readonly string[], at: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const sorted = [...ids].sort();
  const { rows } = runsOnPostgres(db)
    ? await releasePostgres(db, { ids: sorted, at: at.getTime() })
    : await releaseSqlite(db, { ids: JSON.stringify(sorted), at: at.getTime() });
  return new Set(rows.map((row) => row.id));
}

const releasePostgres = compiledStatement((db, v: { ids: string[]; at: number }) =>
  releaseWhere(db, sql<string>`any(cast(${v.ids} as text[]))`, '=', v.at),
);

const releaseSqlite = compiledStatement((db, v: { ids: string; at: number }) =>
  releaseWhere(db, sql<string>`(select value from json_each(${v.ids}))`, 'in', v.at),
);

function releaseWhere(db: Kysely<Database>, ids: RawBuilder<string>, operator: '=' | 'in', at: number) {
  return db
    .updateTable('messages')
    .set({ scheduled_for: null, wait_reason: null, released_at: at, updated_at: at })
    .where('id', operator, ids)
    .where('status', '=', 'queued')
    .where('scheduled_for', 'is not', null)
    .where(notClearing)
    .returning('id');
}

/** A waiting message leaves the queue as `cancelled` or `expired`; false when it had already left. */
export async function settleWaiting(trx: Executor, id: string, status: 'cancelled' | 'expired', at: Date): Promise<boolean> {
  // A message that will never be sent keeps its record (who, when, what became of it) but not its
  // content: queueing and cancelling again and again must not grow the database (ADR 0055).
  const result = await trx
    .updateTable('messages')
    .set({ status, scheduled_for: null, wait_reason: null, text: '', structured: null, updated_at: at.getTime() })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .where('scheduled_for', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Moves the number's waiting messages due before `until` to `until`, with the reason they wait
 * (null keeps each message's own).
 */
export async function deferWaiting(db: Executor, numberId: string, until: Date, reason: string | null): Promise<void> {
  await db
    .updateTable('messages')
    .set(reason === null ? { scheduled_for: until.getTime() } : { scheduled_for: until.getTime(), wait_reason: reason })
    .where('number_id', '=', numberId)
    .where('scheduled_for', 'is not', null)
    .where('scheduled_for', '<', until.getTime())
    .where(notClearing)
    .execute();
}

/**
 * Brings the number's messages that wait for `reason` (a pause that ended early) forward to
 * `at`, so that the runner decides on them again now rather than at the lift time they were
 * moved to. Their order is kept: equal times leave in id order, which is the order they came.
 */
export async function bringForwardWaiting(db: Executor, numberId: string, reason: string, at: Date): Promise<number> {
  const result = await db
    .updateTable('messages')
    .set({ scheduled_for: at.getTime() })
    .where('number_id', '=', numberId)
    .where('scheduled_for', '>', at.getTime())
    .where('wait_reason', '=', reason)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
