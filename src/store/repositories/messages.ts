import type { Message, MessageContentKind, MessageDirection, MessageStatus } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import { isGroupId } from '../../domain/groups.ts';
import { withGroup } from './groups.ts';
import { withReferral } from './message-referrals.ts';
import type { StructuredContent } from '../../domain/structured-content.ts';
import { sql, type Kysely, type QueryCreator } from 'kysely';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import { eventInsert, insertEventWithDeliveries, pendingDelivery, type EventDelivery, type NewEvent } from './deliveries.ts';
import { reserveMonthlyUnit, takeUnitStatement } from './usage.ts';
import type { Executor } from '../database.ts';
import type { MessageRow } from '../schema-messages.ts';
import type { Database } from '../schema.ts';

/**
 * A message we sent to a group stores the group's id as its recipient, so that everything
 * reading the row alone (receipts above all) knows its chat; the domain's `toPhone` of such a
 * message is our own number, and the subject comes from message_groups where it is read.
 */
export function toMessage(row: MessageRow): Message {
  const sentToGroup = row.direction === 'outbound' && isGroupId(row.to_phone);
  return {
    ...(sentToGroup && { group: { id: row.to_phone, subject: null } }),
    id: row.id,
    accountId: row.account_id,
    numberId: row.number_id,
    direction: row.direction as MessageDirection,
    fromPhone: row.from_phone as E164 | null,
    fromLid: row.from_lid,
    toPhone: (sentToGroup ? row.from_phone : row.to_phone) as E164,
    text: row.text,
    contentKind: row.content_kind as MessageContentKind,
    mediaId: row.media_id,
    structured: row.structured === null ? null : (JSON.parse(row.structured) as StructuredContent),
    status: row.status as MessageStatus,
    engineMessageId: row.engine_message_id,
    createdAt: new Date(row.created_at),
    times: {
      sent: instant(row.sent_at),
      delivered: instant(row.delivered_at),
      read: instant(row.read_at),
      failed: instant(row.failed_at),
      edited: instant(row.edited_at),
      revoked: instant(row.revoked_at),
      // Settling a waiting message is the last write to its row: nothing is sent, so no receipt,
      // edit or revocation comes after it, and its updated_at is when it was cancelled or expired.
      unsent: row.status === 'cancelled' || row.status === 'expired' ? instant(row.updated_at) : null,
    },
  };
}

function instant(value: number | null | undefined): Date | null {
  return value === null || value === undefined ? null : new Date(Number(value));
}

// Every send and every incoming message writes a row, and every send marks it sent: compiled once.
const insertMessageRow = compiledStatement((db, row: NewMessageValues) => messageInsert(db, row));

export type NewMessageValues = Omit<
  MessageRow,
  'error_code' | 'updated_at' | `${'sent' | 'delivered' | 'read' | 'failed' | 'edited' | 'revoked'}_at`
>;

/** A message row's insert, for the statements that write one; a CTE too, hence the QueryCreator. */
function messageInsert(db: QueryCreator<Database>, row: NewMessageValues) {
  return db.insertInto('messages').values({
    id: row.id,
    account_id: row.account_id,
    number_id: row.number_id,
    direction: row.direction,
    from_phone: row.from_phone,
    from_lid: row.from_lid,
    to_phone: row.to_phone,
    text: row.text,
    content_kind: row.content_kind,
    media_id: row.media_id,
    structured: row.structured,
    status: row.status,
    engine_message_id: row.engine_message_id,
    error_code: null,
    created_at: row.created_at,
    updated_at: row.created_at,
  });
}

/**
 * Stores a message with the event that reports it and that event's one delivery. On PostgreSQL
 * this is one statement, three round trips fewer for every incoming message a webhook hears of;
 * elsewhere, and with any other number of deliveries, the writes are made one by one.
 */
export async function insertMessageWithEvent(db: Executor, message: Message, event: NewEvent, deliveries: EventDelivery[]): Promise<void> {
  if (deliveries.length === 1 && runsOnPostgres(db)) {
    const [delivery] = deliveries as [EventDelivery];
    await insertMessageEventAndDelivery(db, {
      ...messageRow(message),
      event: event.id,
      eventAccountId: event.accountId,
      eventType: event.eventType,
      payload: event.payload,
      eventAt: event.createdAt.getTime(),
      deliveryId: delivery.id,
      webhookId: delivery.webhookId,
      claimedUntil: delivery.claimedUntil,
    });
    return;
  }
  await insertMessage(db, message);
  await insertEventWithDeliveries(db, event, deliveries);
}

type MessageEventDeliveryValues = NewMessageValues & {
  event: string;
  eventAccountId: string;
  eventType: NewEvent['eventType'];
  payload: string;
  eventAt: number;
  deliveryId: string;
  webhookId: string;
  claimedUntil: number | null;
};

const insertMessageEventAndDelivery = compiledStatement((db, v: MessageEventDeliveryValues) =>
  db
    .with('message', (cte) => messageInsert(cte, v))
    // The first CTE widens the builder's table list; the event's insert needs only the schema's.
    .with('event', (cte) =>
      eventInsert(cte as unknown as QueryCreator<Database>, {
        id: v.event,
        accountId: v.eventAccountId,
        eventType: v.eventType,
        payload: v.payload,
        at: v.eventAt,
      }),
    )
    .insertInto('webhook_deliveries')
    .values(
      pendingDelivery({
        id: v.deliveryId,
        eventId: v.event,
        webhookId: v.webhookId,
        accountId: v.eventAccountId,
        at: v.eventAt,
        claimedUntil: v.claimedUntil,
      }),
    ),
);

export async function insertMessage(db: Executor, message: Message): Promise<void> {
  await insertMessageRow(db, messageRow(message));
}

export function messageRow(message: Message): NewMessageValues {
  return {
    id: message.id,
    account_id: message.accountId,
    number_id: message.numberId,
    direction: message.direction,
    from_phone: message.fromPhone,
    from_lid: message.fromLid,
    to_phone: message.direction === 'outbound' && message.group != null ? message.group.id : message.toPhone,
    text: message.text,
    content_kind: message.contentKind,
    media_id: message.mediaId,
    structured: message.structured === null ? null : JSON.stringify(message.structured),
    status: message.status,
    engine_message_id: message.engineMessageId,
    created_at: message.createdAt.getTime(),
  };
}

/**
 * Takes a unit of the account's monthly volume and, only if one was left, stores the message:
 * returns whether it did. On PostgreSQL the two are one statement (the message is inserted from
 * the upsert's returned row, so no unit means no row), which saves a round trip on every send;
 * SQLite runs in-process, where two statements cost no more.
 */
export async function insertMessageWithUnit(
  db: Executor,
  message: Message,
  unit: { period: string; limit: number | null },
): Promise<boolean> {
  if (!runsOnPostgres(db) || (unit.limit !== null && unit.limit <= 0)) {
    if (!(await reserveMonthlyUnit(db, message.accountId, unit.period, unit.limit))) return false;
    await insertMessage(db, message);
    return true;
  }
  const row = messageRow(message);
  const { rows } =
    unit.limit === null
      ? await insertWithUnlimitedUnit(db, { ...row, period: unit.period })
      : await insertWithLimitedUnit(db, { ...row, period: unit.period, limit: unit.limit });
  return rows.length > 0;
}

type RowWithUnit = NewMessageValues & { period: string };

const insertWithUnlimitedUnit = compiledStatement((db, v: RowWithUnit) => insertFromUnit(db, v, false));
const insertWithLimitedUnit = compiledStatement((db, v: RowWithUnit & { limit: number }) => insertFromUnit(db, v, true));

function insertFromUnit(db: Kysely<Database>, v: RowWithUnit & { limit?: number }, limited: boolean) {
  return db
    .with('unit', (cte) => takeUnitStatement(cte, { accountId: v.account_id, period: v.period, limit: v.limit }, limited))
    .insertInto('messages')
    .columns(INSERTED_COLUMNS)
    .expression((eb) => eb.selectFrom('unit').select(messageSelection(v)))
    .returning('id');
}

/** The columns a new message is written with, in the order the batch inserts give them. */
export const INSERTED_COLUMNS = [
  'id',
  'account_id',
  'number_id',
  'direction',
  'from_phone',
  'from_lid',
  'to_phone',
  'text',
  'content_kind',
  'media_id',
  'structured',
  'status',
  'engine_message_id',
  'error_code',
  'created_at',
  'updated_at',
] as const;

/** Every column a message is read with: named, so that a prepared statement outlives a migration. */
export const MESSAGE_COLUMNS = [...INSERTED_COLUMNS, 'sent_at', 'delivered_at', 'read_at', 'failed_at', 'edited_at', 'revoked_at'] as const;

/** The values as a select list, in INSERTED_COLUMNS' order; the casts only make the instants' type plain to a reader. */
function messageSelection(v: RowWithUnit) {
  return [
    sql<string>`${v.id}`.as('id'),
    sql<string>`${v.account_id}`.as('account_id'),
    sql<string>`${v.number_id}`.as('number_id'),
    sql<string>`${v.direction}`.as('direction'),
    sql<string | null>`${v.from_phone}`.as('from_phone'),
    sql<string | null>`${v.from_lid}`.as('from_lid'),
    sql<string>`${v.to_phone}`.as('to_phone'),
    sql<string>`${v.text}`.as('text'),
    sql<string>`${v.content_kind}`.as('content_kind'),
    sql<string | null>`${v.media_id}`.as('media_id'),
    sql<string | null>`${v.structured}`.as('structured'),
    sql<string>`${v.status}`.as('status'),
    sql<string | null>`${v.engine_message_id}`.as('engine_message_id'),
    sql<string | null>`null`.as('error_code'),
    sql<number>`cast(${v.created_at} as bigint)`.as('created_at'),
    sql<number>`cast(${v.created_at} as bigint)`.as('updated_at'),
  ];
}

/** Returns whether the row changed; `onlyFrom` makes the change conditional on the current status. */
export async function updateMessageStatus(
  db: Executor,
  id: string,
  change: { status: MessageStatus; engineMessageId?: string; errorCode?: string; at: Date; onlyFrom?: MessageStatus },
): Promise<boolean> {
  const result = await db
    .updateTable('messages')
    .set({
      status: change.status,
      updated_at: change.at.getTime(),
      ...(change.status === 'failed' && { failed_at: change.at.getTime() }),
      ...(change.engineMessageId !== undefined && { engine_message_id: change.engineMessageId }),
      ...(change.errorCode !== undefined && { error_code: change.errorCode }),
    })
    .where('id', '=', id)
    .$if(change.onlyFrom !== undefined, (query) => query.where('status', '=', change.onlyFrom!))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The message, with the group chat it belongs to when it is a group message. */
export async function findMessageById(db: Executor, id: string): Promise<Message | undefined> {
  const row = await db
    .selectFrom('messages')
    .leftJoin('message_groups', 'message_groups.message_id', 'messages.id')
    .leftJoin('message_referrals', 'message_referrals.message_id', 'messages.id')
    .selectAll('messages')
    .select(['message_groups.group_id', 'message_groups.group_subject', 'message_groups.mentions', 'message_referrals.referral'])
    .where('messages.id', '=', id)
    .executeTakeFirst();
  return row && withReferral(withGroup(toMessage(row), row), row);
}

/** Several messages at once, each with its group chat; those that do not exist are left out. */
export async function findMessagesByIds(db: Executor, ids: readonly string[]): Promise<Message[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('messages')
    .leftJoin('message_groups', 'message_groups.message_id', 'messages.id')
    .leftJoin('message_referrals', 'message_referrals.message_id', 'messages.id')
    .selectAll('messages')
    .select(['message_groups.group_id', 'message_groups.group_subject', 'message_groups.mentions', 'message_referrals.referral'])
    .where('messages.id', 'in', ids)
    .execute();
  return rows.map((row) => withReferral(withGroup(toMessage(row), row), row));
}

/** An incoming message of the number by WhatsApp's (or the sandbox network's) id for it. */
// Every incoming message is looked up before it is stored (a redelivery is kept once), so the
// lookup is compiled once. The direction is a literal, which the partial unique index on
// (number_id, engine_message_id) where direction = 'inbound' needs to be chosen.
const selectInboundByEngineId = compiledStatement((db, v: { numberId: string; engineMessageId: string }) =>
  db
    .selectFrom('messages')
    .select(MESSAGE_COLUMNS)
    .where('number_id', '=', v.numberId)
    .where('engine_message_id', '=', v.engineMessageId)
    .where('direction', '=', sql.lit('inbound')),
);

export async function findInboundByEngineId(db: Executor, numberId: string, engineMessageId: string): Promise<Message | undefined> {
  const [row] = (await selectInboundByEngineId(db, { numberId, engineMessageId })).rows;
  return row && toMessage(row);
}

// The sandbox answers every simulated incoming message with the message as stored, read back by
// its network id. Built afresh by Kysely, after a first select of the same row, that read cost
// 59 µs of CPU on SQLite and 144 µs on PostgreSQL; one compiled statement costs 35 and 37 µs
// (issue 41). The columns are named, as MESSAGE_COLUMNS are, so that the prepared statement
// outlives a migration.
const selectWholeInboundByEngineId = compiledStatement((db, v: { numberId: string; engineMessageId: string }) =>
  db
    .selectFrom('messages')
    .leftJoin('message_groups', 'message_groups.message_id', 'messages.id')
    .leftJoin('message_referrals', 'message_referrals.message_id', 'messages.id')
    .select(MESSAGE_COLUMNS.map((column) => `messages.${column}` as const))
    .select(['message_groups.group_id', 'message_groups.group_subject', 'message_groups.mentions', 'message_referrals.referral'])
    .where('messages.number_id', '=', v.numberId)
    .where('messages.engine_message_id', '=', v.engineMessageId)
    .where('messages.direction', '=', sql.lit('inbound')),
);

/** An incoming message by its engine id, whole: with the group chat and the ad it came from, as findMessageById reads them. */
export async function findWholeInboundByEngineId(db: Executor, numberId: string, engineMessageId: string): Promise<Message | undefined> {
  const [row] = (await selectWholeInboundByEngineId(db, { numberId, engineMessageId })).rows;
  return row && withReferral(withGroup(toMessage(row), row), row);
}

/**
 * Moves an outbound message's status forward, never back: a late `delivered` receipt must not
 * undo `read`. Returns the message when the change applied, undefined when it was not allowed
 * or the engine id is not known (yet). A non-null `errorCode` is recorded with the change.
 */
/** An outbound message as a receipt names it: our sending number and WhatsApp's id, unique only together. */
export interface SentMessageKey {
  fromPhone: string;
  engineMessageId: string;
}

export async function advanceOutboundStatus(
  db: Executor,
  sent: SentMessageKey,
  status: MessageStatus,
  allowedFrom: MessageStatus[],
  at: Date,
  errorCode: string | null = null,
): Promise<Message | undefined> {
  if (allowedFrom.length === 0) return undefined;
  const values: Record<string, string | number> = {
    engineMessageId: sent.engineMessageId,
    fromPhone: sent.fromPhone,
    status,
    at: at.getTime(),
  };
  allowedFrom.forEach((from, index) => {
    values[`from${index}`] = from;
  });
  if (errorCode !== null) values.errorCode = errorCode;
  const row = (await advanceStatement(status, allowedFrom.length, errorCode !== null)(db, values)).rows[0];
  return row && toMessage(row as MessageRow);
}

// Every send's receipts run this, in a few shapes (the status, whose time it records, how many
// statuses it may move from, and whether a code comes with it), each compiled once.
const advanceStatements = new Map<string, ReturnType<typeof compileAdvance>>();

function advanceStatement(status: MessageStatus, allowedCount: number, withErrorCode: boolean) {
  const shape = `${status}:${allowedCount}:${withErrorCode}`;
  let statement = advanceStatements.get(shape);
  if (statement === undefined) {
    statement = compileAdvance(status, allowedCount, withErrorCode);
    advanceStatements.set(shape, statement);
  }
  return statement;
}

function compileAdvance(status: MessageStatus, allowedCount: number, withErrorCode: boolean) {
  // One statement that checks and moves the status: two receipts racing in concurrent
  // transactions cannot both apply, and every receipt costs one round trip, not two.
  return compiledStatement((db, v: Record<string, string | number>) => {
    const update = db
      .updateTable('messages')
      .set({
        status: v.status as string,
        updated_at: v.at as number,
        [`${status}_at`]: v.at as number,
        ...(withErrorCode && { error_code: v.errorCode as string }),
      })
      .where(
        'status',
        'in',
        Array.from({ length: allowedCount }, (_unused, index) => v[`from${index}`] as string),
      );
    // Named, not *, so that the prepared statement survives a migration adding a column.
    return update
      .where('engine_message_id', '=', v.engineMessageId as string)
      .where('from_phone', '=', v.fromPhone as string)
      .where('direction', '=', 'outbound')
      .returning(MESSAGE_COLUMNS);
  });
}

export async function findOutboundStatus(db: Executor, sent: SentMessageKey): Promise<MessageStatus | undefined> {
  const row = await db
    .selectFrom('messages')
    .select('status')
    .where('engine_message_id', '=', sent.engineMessageId)
    .where('from_phone', '=', sent.fromPhone)
    .where('direction', '=', 'outbound')
    .executeTakeFirst();
  return row?.status as MessageStatus | undefined;
}

/** A direct message's status as it stands, with a failure's reason and when it last changed; undefined for an unknown id. */
export async function findDirectMessageStatus(db: Executor, id: string): Promise<DirectMessageStatus | undefined> {
  const row = await db
    .selectFrom('messages')
    .select(['id', 'from_phone', 'to_phone', 'direction', 'status', 'error_code', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  return (
    row && {
      message: {
        id: row.id,
        fromPhone: row.from_phone as E164 | null,
        toPhone: row.to_phone as E164,
        direction: row.direction as MessageDirection,
        group: null,
      },
      status: row.status as MessageStatus,
      errorCode: row.error_code,
      at: new Date(Number(row.updated_at)),
    }
  );
}

export interface DirectMessageStatus {
  message: Pick<Message, 'id' | 'fromPhone' | 'toPhone' | 'direction' | 'group'>;
  status: MessageStatus;
  errorCode: string | null;
  at: Date;
}

/** Outbound rows still `queued`: sends that a crash interrupted before the engine answered. */
export async function listInterruptedSends(
  db: Executor,
  createdBefore: Date,
): Promise<(Pick<Message, 'id' | 'accountId' | 'toPhone' | 'direction' | 'group'> & { fromPhone: E164; createdAt: number })[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'account_id', 'from_phone', 'to_phone', 'created_at'])
    .where('direction', '=', 'outbound')
    .where('status', '=', 'queued')
    // A message waiting in the send governor's queue is no interrupted send.
    .where('scheduled_for', 'is', null)
    .where('created_at', '<', createdBefore.getTime())
    .execute();
  return rows.map((row) => ({
    id: row.id,
    accountId: row.account_id,
    direction: 'outbound' as const,
    // Outbound rows always carry our own number as the sender; only inbound ones may lack it.
    fromPhone: row.from_phone as E164,
    // A group send's recipient column holds the group (see toMessage).
    toPhone: (isGroupId(row.to_phone) ? row.from_phone : row.to_phone) as E164,
    group: isGroupId(row.to_phone) ? { id: row.to_phone, subject: null } : null,
    createdAt: row.created_at,
  }));
}
