import { sql, type QueryCreator, type RawBuilder } from 'kysely';
import type { MessageStatus } from '../../domain/model.ts';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';

/**
 * Many messages' status changes, and the lease rows that fence them, in one statement each
 * whatever their number: on PostgreSQL each column is one array parameter (unnest), on SQLite
 * the rows are one JSON parameter (json_each), so each statement's text, and its prepared plan,
 * stay the same for any batch. Rows come sorted by key, so that two batches lock shared rows in
 * one order.
 */

interface LeaseRow {
  numberId: string;
  nodeId: string | null;
  epoch: number;
}

/**
 * The numbers' lease rows, sorted by number; on PostgreSQL read FOR KEY SHARE and so locked in
 * that order (the fence of owner-only writes: see assertLeaseHeld in leases.ts).
 */
export async function readLeaseRows(db: Executor, numberIds: readonly string[]): Promise<LeaseRow[]> {
  const ids = [...numberIds].sort();
  const { rows } = runsOnPostgres(db) ? await leaseRowsPostgres(db, { ids }) : await leaseRowsSqlite(db, { ids: JSON.stringify(ids) });
  return rows.map((row) => ({ numberId: row.number_id, nodeId: row.node_id, epoch: Number(row.epoch) }));
}

const leaseRowsPostgres = compiledStatement((db, v: { ids: string[] }) =>
  db
    .selectFrom('number_leases')
    .select(['number_id', 'node_id', 'epoch'])
    .where('number_id', '=', sql<string>`any(cast(${v.ids} as text[]))`)
    .orderBy('number_id')
    .forKeyShare(),
);

const leaseRowsSqlite = compiledStatement((db, v: { ids: string }) =>
  db
    .selectFrom('number_leases')
    .select(['number_id', 'node_id', 'epoch'])
    .where('number_id', 'in', sql<string>`(select value from json_each(${v.ids}))`)
    .orderBy('number_id'),
);

export interface SentRow {
  id: string;
  engineMessageId: string;
  at: number;
  /** Only over a row still pending (`queued`, or `unknown` once a first record failed). */
  onlyIfPending: boolean;
}

/** Records the engine's answers: each row `sent` under WhatsApp's id. Returns the ids of the rows that changed. */
export async function markRowsSent(db: Executor, sent: readonly SentRow[]): Promise<Set<string>> {
  if (sent.length === 0) return new Set();
  const rows = [...sent].sort(byId);
  const result = runsOnPostgres(db)
    ? await markSentPostgres(db, {
        ids: rows.map((row) => row.id),
        engineIds: rows.map((row) => row.engineMessageId),
        ats: rows.map((row) => row.at),
        onlyPending: rows.map((row) => (row.onlyIfPending ? 1 : 0)),
      })
    : await markSentSqlite(db, {
        rows: JSON.stringify(rows.map((row) => ({ i: row.id, e: row.engineMessageId, t: row.at, p: row.onlyIfPending ? 1 : 0 }))),
      });
  return new Set(result.rows.map((row) => row.id));
}

const PENDING: MessageStatus[] = ['queued', 'unknown'];

const markSentPostgres = compiledStatement((db, v: { ids: string[]; engineIds: string[]; ats: number[]; onlyPending: number[] }) =>
  markSentFrom(
    db.with('sent', (cte) =>
      cte.selectNoFrom([
        sql<string>`unnest(cast(${v.ids} as text[]))`.as('id'),
        sql<string>`unnest(cast(${v.engineIds} as text[]))`.as('engine_message_id'),
        sql<number>`unnest(cast(${v.ats} as bigint[]))`.as('at'),
        sql<number>`unnest(cast(${v.onlyPending} as int[]))`.as('only_pending'),
      ]),
    ),
  ),
);

const markSentSqlite = compiledStatement((db, v: { rows: string }) =>
  markSentFrom(
    db.with('sent', (cte) =>
      cte
        .selectFrom(sql`json_each(${v.rows})`.as('r'))
        .select([
          sql<string>`r.value ->> 'i'`.as('id'),
          sql<string>`r.value ->> 'e'`.as('engine_message_id'),
          sql<number>`r.value ->> 't'`.as('at'),
          sql<number>`r.value ->> 'p'`.as('only_pending'),
        ]),
    ),
  ),
);

/** The one `sent` update of both dialects, over the rows their `sent` table expression unpacks. */
function markSentFrom(
  withSent: QueryCreator<Database & { sent: { id: string; engine_message_id: string; at: number; only_pending: number } }>,
) {
  return withSent
    .updateTable('messages')
    .from('sent')
    .set((eb) => ({
      status: 'sent',
      engine_message_id: eb.ref('sent.engine_message_id'),
      error_code: null,
      updated_at: eb.ref('sent.at'),
      sent_at: eb.ref('sent.at'),
    }))
    .whereRef('messages.id', '=', 'sent.id')
    .where((eb) => eb.or([eb('sent.only_pending', '=', 0), eb('messages.status', 'in', PENDING)]))
    .returning('messages.id');
}

/** The statuses a receipt moves a row to, each with the column that records its time. */
export type AdvancedStatus = 'delivered' | 'read' | 'failed';

export interface AdvanceRow {
  id: string;
  at: number;
  /** Recorded with the change when not null (a failure's reason). */
  errorCode: string | null;
}

/**
 * Moves rows forward to `status`, each only from one of `allowedFrom` (never back: a late
 * `delivered` must not undo `read`). Returns the ids of the rows that moved.
 */
export async function advanceRowsById(
  db: Executor,
  status: AdvancedStatus,
  allowedFrom: readonly MessageStatus[],
  advances: readonly AdvanceRow[],
): Promise<Set<string>> {
  if (advances.length === 0 || allowedFrom.length === 0) return new Set();
  const rows = [...advances].sort(byId);
  const result = runsOnPostgres(db)
    ? await ADVANCE_POSTGRES[status](db, {
        ids: rows.map((row) => row.id),
        ats: rows.map((row) => row.at),
        errorCodes: rows.map((row) => row.errorCode),
        allowedFrom: [...allowedFrom],
      })
    : await ADVANCE_SQLITE[status](db, {
        rows: JSON.stringify(rows.map((row) => ({ i: row.id, t: row.at, c: row.errorCode }))),
        allowedFrom: JSON.stringify(allowedFrom),
      });
  return new Set(result.rows.map((row) => row.id));
}

function advancePostgres(status: AdvancedStatus) {
  return compiledStatement((db, v: { ids: string[]; ats: number[]; errorCodes: (string | null)[]; allowedFrom: string[] }) =>
    advanceFrom(
      db.with('moved', (cte) =>
        cte.selectNoFrom([
          sql<string>`unnest(cast(${v.ids} as text[]))`.as('id'),
          sql<number>`unnest(cast(${v.ats} as bigint[]))`.as('at'),
          sql<string | null>`unnest(cast(${v.errorCodes} as text[]))`.as('error_code'),
        ]),
      ),
      status,
      sql<boolean>`messages.status = any(cast(${v.allowedFrom} as text[]))`,
    ),
  );
}

function advanceSqlite(status: AdvancedStatus) {
  return compiledStatement((db, v: { rows: string; allowedFrom: string }) =>
    advanceFrom(
      db.with('moved', (cte) =>
        cte
          .selectFrom(sql`json_each(${v.rows})`.as('r'))
          .select([
            sql<string>`r.value ->> 'i'`.as('id'),
            sql<number>`r.value ->> 't'`.as('at'),
            sql<string | null>`r.value ->> 'c'`.as('error_code'),
          ]),
      ),
      status,
      sql<boolean>`messages.status in (select value from json_each(${v.allowedFrom}))`,
    ),
  );
}

/** The one advance of both dialects, over the rows their `moved` table expression unpacks, from the statuses `allowed` admits. */
function advanceFrom(
  withMoved: QueryCreator<Database & { moved: { id: string; at: number; error_code: string | null } }>,
  status: AdvancedStatus,
  allowed: RawBuilder<boolean>,
) {
  return withMoved
    .updateTable('messages')
    .from('moved')
    .set((eb) => ({
      status,
      updated_at: eb.ref('moved.at'),
      [`${status}_at`]: eb.ref('moved.at'),
      error_code: eb.fn.coalesce('moved.error_code', 'messages.error_code'),
    }))
    .whereRef('messages.id', '=', 'moved.id')
    .where(allowed)
    .returning('messages.id');
}

const ADVANCED_STATUSES: readonly AdvancedStatus[] = ['delivered', 'read', 'failed'];
const ADVANCE_POSTGRES = Object.fromEntries(ADVANCED_STATUSES.map((status) => [status, advancePostgres(status)])) as Record<
  AdvancedStatus,
  ReturnType<typeof advancePostgres>
>;
const ADVANCE_SQLITE = Object.fromEntries(ADVANCED_STATUSES.map((status) => [status, advanceSqlite(status)])) as Record<
  AdvancedStatus,
  ReturnType<typeof advanceSqlite>
>;

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
