import { sql, type ExpressionBuilder, type Kysely, type QueryCreator, type RawBuilder } from 'kysely';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';

/**
 * The send governor's queue, which is the messages table (ADR 0029): a waiting message is
 * `queued` with `scheduled_for`; `released_at` marks the sends the governor let go, which are
 * the number's history its caps count.
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

/** A send of the number, made (released) in the window, or planned (waiting) with its id. */
export interface LedgerMarks {
  made: { at: number; recipient: string; firstContact: boolean }[];
  planned: { id: string; at: number; recipient: string; firstContact: boolean; scheduled: boolean; bytes: number }[];
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
 * What the governor's ledger of the number is built from (ADR 0048), once, when its node gains the
 * number: its sends released since `since` and every message still waiting, each in time order,
 * through the two partial indexes.
 */
export async function readLedgerMarks(db: Executor, numberId: string, since: Date): Promise<LedgerMarks> {
  const made = await db
    .selectFrom('messages')
    // A send counts from when the engine accepted it (sent_at), as the governor's gap does.
    .select([sql<number>`coalesce(sent_at, released_at)`.as('at'), 'to_phone', 'first_contact'])
    .where('number_id', '=', numberId)
    .where('released_at', 'is not', null)
    .where('released_at', '>', since.getTime())
    .orderBy('released_at')
    .execute();
  const planned = await db
    .selectFrom('messages')
    .select(['id', 'scheduled_for as at', 'to_phone', 'first_contact', 'wait_reason'])
    .select(sql<number | string>`octet_length(text) + coalesce(octet_length(structured), 0)`.as('bytes'))
    .where('number_id', '=', numberId)
    .where('scheduled_for', 'is not', null)
    .where(notClearing)
    .orderBy('scheduled_for')
    .execute();
  return {
    made: made.map((row) => ({ at: Number(row.at), recipient: row.to_phone, firstContact: row.first_contact === 1 })),
    planned: planned.map((row) => ({
      id: row.id,
      at: Number(row.at),
      recipient: row.to_phone,
      firstContact: row.first_contact === 1,
      scheduled: row.wait_reason === 'scheduled' || row.wait_reason === 'new_chat_cap',
      bytes: Number(row.bytes),
    })),
  };
}

/**
 * Which of the phones the number has exchanged any message with (a first contact has none), in
 * one statement for any number of phones, each side through its per-account phone index: asked
 * as one condition with an `or`, both databases walked the number's own index instead, a scan of
 * its whole history per send.
 *
 * SQLite probes each phone with two correlated EXISTS (it stops at the first row). PostgreSQL
 * matches the phones as an array instead: a correlated probe is planned for any phone at once,
 * and where one value fills a column (every outbound row's from_phone is the number's own) it
 * estimated every row a match and chose a sequential scan, 28 ms a phone at 100,000 messages.
 * Matched as `= any(array)`, each phone is estimated as the constant it is.
 */
export async function exchangedWithAny(db: Executor, accountId: string, numberId: string, phones: readonly string[]): Promise<Set<string>> {
  if (phones.length === 0) return new Set();
  if (runsOnPostgres(db)) {
    const { rows } = await exchangedPostgres(db, { accountId, numberId, phones: [...phones] });
    return new Set(rows.flatMap((row) => (row.phone === null ? [] : [row.phone])));
  }
  const { rows } = await exchangedSqlite(db, { accountId, numberId, phones: JSON.stringify(phones) });
  return new Set(rows.filter((row) => Boolean(row.sent_to) || Boolean(row.received_from)).map((row) => row.phone));
}

const exchangedPostgres = compiledStatement(exchangedPostgresQuery);

/** The statement of exchangedWithAny on PostgreSQL, whose plan a test reads. */
export function exchangedPostgresQuery(db: Executor, v: { accountId: string; numberId: string; phones: string[] }) {
  const side = (column: 'to_phone' | 'from_phone') =>
    db
      .selectFrom('messages')
      .select(`messages.${column} as phone`)
      .where('messages.account_id', '=', v.accountId)
      .where(`messages.${column}`, '=', sql<string>`any(cast(${v.phones} as text[]))`)
      .where('messages.number_id', '=', v.numberId);
  return side('to_phone').union(side('from_phone'));
}

const exchangedSqlite = compiledStatement(exchangedSqliteQuery);

/** The statement of exchangedWithAny on SQLite (the phones as a JSON array), whose plan a test reads. */
export function exchangedSqliteQuery(db: Executor, v: { accountId: string; numberId: string; phones: string }) {
  return exchangedWithQuery(
    db.with('asked', (cte) => cte.selectFrom(sql`json_each(${v.phones})`.as('p')).select(sql<string>`p.value`.as('phone'))),
    v,
  );
}

/** The statement of exchangedWithAny over the phones `asked` holds. */
function exchangedWithQuery(asked: QueryCreator<Database & { asked: { phone: string } }>, v: { accountId: string; numberId: string }) {
  return asked.selectFrom('asked').select((eb) => {
    const probe = (column: 'to_phone' | 'from_phone') =>
      eb
        .selectFrom('messages')
        .select('messages.id')
        .where('messages.account_id', '=', v.accountId)
        .where(`messages.${column}`, '=', eb.ref('asked.phone'))
        .where('messages.number_id', '=', v.numberId)
        .limit(1);
    return ['asked.phone', eb.exists(probe('to_phone')).as('sent_to'), eb.exists(probe('from_phone')).as('received_from')];
  });
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
function notClearing(eb: ExpressionBuilder<Database, 'messages'>) {
  return eb.and([notMarked(eb), eb.not(clearedAway(eb))]);
}

function notMarked(eb: ExpressionBuilder<Database, 'messages'>) {
  return eb.or([eb('messages.wait_reason', 'is', null), eb('messages.wait_reason', '<>', CLEARING)]);
}

/** Taken by a clear of its number (ADR 0066): created at or before the number's last clear. */
function clearedAway(eb: ExpressionBuilder<Database, 'messages'>) {
  return eb.exists(
    eb
      .selectFrom('queue_clears')
      .select('queue_clears.number_id')
      .whereRef('queue_clears.number_id', '=', 'messages.number_id')
      .whereRef('queue_clears.cleared_through', '>=', 'messages.created_at'),
  );
}

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

export async function setNumberSendPolicy(db: Executor, numberId: string, stored: string | null): Promise<void> {
  await db.updateTable('whatsapp_numbers').set({ send_policy: stored }).where('id', '=', numberId).execute();
}

export async function setAccountSendPolicy(db: Executor, accountId: string, stored: string | null): Promise<void> {
  await db.updateTable('accounts').set({ send_policy: stored }).where('id', '=', accountId).execute();
}

export async function findSendPolicies(
  db: Executor,
  numberId: string,
): Promise<{ number: string | null; account: string | null } | undefined> {
  const row = await db
    .selectFrom('whatsapp_numbers')
    .innerJoin('accounts', 'accounts.id', 'whatsapp_numbers.account_id')
    .select(['whatsapp_numbers.send_policy as number', 'accounts.send_policy as account'])
    .where('whatsapp_numbers.id', '=', numberId)
    .executeTakeFirst();
  return row;
}

/** Ids per statement when many numbers are read at once. */
const IDS_PER_STATEMENT = 500;

/** The stored settings of many numbers and their accounts, in one statement per 500 numbers. */
export async function findSendPoliciesOf(
  db: Executor,
  numberIds: readonly string[],
): Promise<Map<string, { number: string | null; account: string | null }>> {
  const settings = new Map<string, { number: string | null; account: string | null }>();
  for (let start = 0; start < numberIds.length; start += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('whatsapp_numbers')
      .innerJoin('accounts', 'accounts.id', 'whatsapp_numbers.account_id')
      .select(['whatsapp_numbers.id', 'whatsapp_numbers.send_policy as number', 'accounts.send_policy as account'])
      .where('whatsapp_numbers.id', 'in', numberIds.slice(start, start + IDS_PER_STATEMENT))
      .execute();
    for (const row of rows) settings.set(row.id, { number: row.number, account: row.account });
  }
  return settings;
}

export async function findAccountSendPolicy(db: Executor, accountId: string): Promise<string | null> {
  const row = await db.selectFrom('accounts').select('send_policy').where('id', '=', accountId).executeTakeFirst();
  return row?.send_policy ?? null;
}

/**
 * The number's sends (messages WhatsApp accepted) in each hour of the window that starts at
 * `since`, oldest hour first; counted in SQL so a busy number costs one row per hour.
 */
export async function countSentPerHour(db: Executor, numberId: string, since: Date, hours: number): Promise<number[]> {
  const start = since.getTime();
  const hourMs = 3_600_000;
  // Literals, not parameters: PostgreSQL matches the grouped expression to the selected one by
  // its text, and two parameters are two expressions to it. Both are integers we computed.
  const hourOf = sql<number | string>`(sent_at - ${sql.lit(start)}) / ${sql.lit(hourMs)}`;
  const rows = await db
    .selectFrom('messages')
    .select([hourOf.as('hour'), (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('number_id', '=', numberId)
    .where('direction', '=', 'outbound')
    .where('sent_at', '>=', start)
    .where('sent_at', '<', start + hours * hourMs)
    .groupBy(hourOf)
    .execute();
  const counts = Array.from({ length: hours }, () => 0);
  for (const row of rows) counts[Math.floor(Number(row.hour))] = Number(row.count);
  return counts;
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
