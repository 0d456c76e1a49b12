import { sql } from 'kysely';
import type { Message } from '../../domain/model.ts';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import { insertMessage, INSERTED_COLUMNS, messageRow, type NewMessageValues } from './messages.ts';

/**
 * Stores several messages. On PostgreSQL they go in one statement whatever their number, each
 * column as one array parameter (so the statement's text, and its prepared plan, stay the
 * same); SQLite runs in-process, where a prepared insert per row costs no more.
 */
export async function insertMessages(db: Executor, messages: readonly Message[]): Promise<void> {
  if (messages.length === 1 || !runsOnPostgres(db)) {
    for (const message of messages) await insertMessage(db, message);
    return;
  }
  if (messages.length === 0) return;
  const rows = messages.map(messageRow);
  const column = <Name extends keyof NewMessageValues>(name: Name) => rows.map((row) => row[name]);
  await insertMessageColumns(db, {
    id: column('id'),
    account_id: column('account_id'),
    number_id: column('number_id'),
    direction: column('direction'),
    from_phone: column('from_phone'),
    from_lid: column('from_lid'),
    to_phone: column('to_phone'),
    text: column('text'),
    content_kind: column('content_kind'),
    media_id: column('media_id'),
    structured: column('structured'),
    status: column('status'),
    engine_message_id: column('engine_message_id'),
    created_at: column('created_at'),
  });
}

type MessageColumns = { [Name in keyof NewMessageValues]: NewMessageValues[Name][] };

// unnest() side by side in a select list walks the arrays in step, one row per index.
const insertMessageColumns = compiledStatement((db, v: MessageColumns) =>
  db
    .insertInto('messages')
    .columns(INSERTED_COLUMNS)
    .expression(
      db.selectNoFrom([
        sql<string>`unnest(cast(${v.id} as text[]))`.as('id'),
        sql<string>`unnest(cast(${v.account_id} as text[]))`.as('account_id'),
        sql<string>`unnest(cast(${v.number_id} as text[]))`.as('number_id'),
        sql<string>`unnest(cast(${v.direction} as text[]))`.as('direction'),
        sql<string | null>`unnest(cast(${v.from_phone} as text[]))`.as('from_phone'),
        sql<string | null>`unnest(cast(${v.from_lid} as text[]))`.as('from_lid'),
        sql<string>`unnest(cast(${v.to_phone} as text[]))`.as('to_phone'),
        sql<string>`unnest(cast(${v.text} as text[]))`.as('text'),
        sql<string>`unnest(cast(${v.content_kind} as text[]))`.as('content_kind'),
        sql<string | null>`unnest(cast(${v.media_id} as text[]))`.as('media_id'),
        sql<string | null>`unnest(cast(${v.structured} as text[]))`.as('structured'),
        sql<string>`unnest(cast(${v.status} as text[]))`.as('status'),
        sql<string | null>`unnest(cast(${v.engine_message_id} as text[]))`.as('engine_message_id'),
        sql<string | null>`null`.as('error_code'),
        sql<number>`unnest(cast(${v.created_at} as bigint[]))`.as('created_at'),
        sql<number>`unnest(cast(${v.created_at} as bigint[]))`.as('updated_at'),
      ]),
    ),
);
