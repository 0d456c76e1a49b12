// The number's send history as the governor's caps count it (ADR 0048): what it released, what
// waits, whom it has written to before, and its sends per hour. Reads only; the queue's moves
// are in send-queue.ts.
import { sql, type QueryCreator } from 'kysely';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';
import { notClearing } from './queue-clears.ts';

/** A send of the number, made (released) in the window, or planned (waiting) with its id. */
export interface LedgerMarks {
  made: { at: number; recipient: string; firstContact: boolean }[];
  planned: { id: string; at: number; recipient: string; firstContact: boolean; scheduled: boolean; bytes: number }[];
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
