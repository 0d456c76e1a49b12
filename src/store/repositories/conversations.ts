import type { Message, QuotedMessage } from '../../domain/model.ts';
import { newId } from '../../domain/ids.ts';
import type { ExpressionBuilder } from 'kysely';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';
import { groupedByMessage } from './grouped-rows.ts';
import { MESSAGE_COLUMNS, toMessage } from './messages.ts';

export interface Reaction {
  /** The reactor's phone, or LID when the phone is unknown; our number's phone for ours. */
  reactor: string;
  fromUs: boolean;
  emoji: string;
  reactedAt: Date;
}

export interface Revision {
  kind: 'edited' | 'revoked';
  /** The text the message had until this change. */
  previousText: string;
  fromUs: boolean;
  changedAt: Date;
}

/** The most earlier messages one read mark settles; older unread ones were long since seen. */
const MOST_MARKED_READ = 100;

export async function insertReply(db: Executor, message: Pick<Message, 'id' | 'accountId'>, quoted: QuotedMessage): Promise<void> {
  await db
    .insertInto('message_replies')
    .values({
      message_id: message.id,
      account_id: message.accountId,
      quoted_message_id: quoted.messageId,
      quoted_engine_id: quoted.engineMessageId,
    })
    .execute();
}

/** What each of the messages quotes, for those that are replies. */
export async function findReplies(db: Executor, messageIds: readonly string[]): Promise<Map<string, QuotedMessage>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db.selectFrom('message_replies').selectAll().where('message_id', 'in', messageIds).execute();
  return new Map(rows.map((row) => [row.message_id, { messageId: row.quoted_message_id, engineMessageId: row.quoted_engine_id }]));
}

/**
 * A message of the number by WhatsApp's id for it, sent or received: what a quote, a reaction,
 * an edit or a revocation names. A WhatsApp id is unique per sender, so the number narrows it.
 */
export async function findByEngineId(db: Executor, numberId: string, engineMessageId: string): Promise<Message | undefined> {
  const row = await db
    .selectFrom('messages')
    .select(MESSAGE_COLUMNS)
    .where('engine_message_id', '=', engineMessageId)
    .where('number_id', '=', numberId)
    .executeTakeFirst();
  return row && toMessage(row);
}

/** Sets or (with an empty emoji) removes one reactor's reaction to a message. */
export async function saveReaction(db: Executor, message: Pick<Message, 'id' | 'accountId'>, reaction: Reaction): Promise<void> {
  await db.deleteFrom('message_reactions').where('message_id', '=', message.id).where('reactor', '=', reaction.reactor).execute();
  if (reaction.emoji === '') return;
  await db
    .insertInto('message_reactions')
    .values({
      message_id: message.id,
      account_id: message.accountId,
      reactor: reaction.reactor,
      from_us: reaction.fromUs ? 1 : 0,
      emoji: reaction.emoji,
      reacted_at: reaction.reactedAt.getTime(),
    })
    .execute();
}

/** The reactions on each of the messages, oldest first: one query for the lot; a message with none is absent. */
export async function listReactionsOf(db: Executor, messageIds: readonly string[]): Promise<Map<string, Reaction[]>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db.selectFrom('message_reactions').selectAll().where('message_id', 'in', messageIds).orderBy('reacted_at').execute();
  return groupedByMessage(rows, (row) => ({
    reactor: row.reactor,
    fromUs: row.from_us === 1,
    emoji: row.emoji,
    reactedAt: new Date(Number(row.reacted_at)),
  }));
}

/**
 * Replaces a message's text by an edit, or blanks it for a revocation, keeping the text it had
 * as a revision. Returns the message as it is now, or undefined when it was already revoked
 * (nothing changes a revoked message).
 */
export async function reviseMessage(
  db: Executor,
  message: Message,
  change: { kind: 'edited'; text: string; fromUs: boolean; at: Date } | { kind: 'revoked'; fromUs: boolean; at: Date },
): Promise<Message | undefined> {
  const at = change.at.getTime();
  const row = await db
    .updateTable('messages')
    .set(change.kind === 'edited' ? { text: change.text, edited_at: at, updated_at: at } : { text: '', revoked_at: at, updated_at: at })
    .where('id', '=', message.id)
    .where('revoked_at', 'is', null)
    .returning(MESSAGE_COLUMNS)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  await db
    .insertInto('message_revisions')
    .values({
      id: newId('revision'),
      message_id: message.id,
      account_id: message.accountId,
      kind: change.kind,
      previous_text: message.text,
      from_us: change.fromUs ? 1 : 0,
      changed_at: at,
    })
    .execute();
  return toMessage(row);
}

/** The revisions of each of the messages, oldest first: one query for the lot; a message never changed is absent. */
export async function listRevisionsOf(db: Executor, messageIds: readonly string[]): Promise<Map<string, Revision[]>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('message_revisions')
    .selectAll()
    .where('message_id', 'in', messageIds)
    .orderBy('changed_at')
    .orderBy('id')
    .execute();
  return groupedByMessage(rows, (row) => ({
    kind: row.kind as Revision['kind'],
    previousText: row.previous_text,
    fromUs: row.from_us === 1,
    changedAt: new Date(Number(row.changed_at)),
  }));
}

/**
 * Marks an incoming message and the unread ones before it from the same sender as read by us,
 * as WhatsApp's read mark covers the chat up to a message. Returns those it marked, oldest first,
 * which the engine then reports to the sender.
 */
export async function markReceivedRead(db: Executor, upTo: Message, at: Date): Promise<Message[]> {
  let unread = db
    .selectFrom('messages')
    .select('id')
    .where('number_id', '=', upTo.numberId)
    .where('direction', '=', 'inbound')
    .where('read_at', 'is', null)
    .where('created_at', '<=', upTo.createdAt.getTime());
  unread = upTo.fromPhone !== null ? unread.where('from_phone', '=', upTo.fromPhone) : unread.where('from_lid', '=', upTo.fromLid);
  // Only the chat of the message: its group's, or the direct chat with its sender, never both.
  const group = upTo.group ?? null;
  const inGroup = (eb: ExpressionBuilder<Database, 'messages'>) =>
    eb.exists(
      eb
        .selectFrom('message_groups')
        .select('message_groups.message_id')
        .whereRef('message_groups.message_id', '=', 'messages.id')
        .$if(group !== null, (query) => query.where('message_groups.group_id', '=', group!.id)),
    );
  unread = group === null ? unread.where((eb) => eb.not(inGroup(eb))) : unread.where(inGroup);
  const ids = (await unread.orderBy('created_at', 'desc').limit(MOST_MARKED_READ).execute()).map((row) => row.id);
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('messages')
    .set({ read_at: at.getTime() })
    .where('id', 'in', ids)
    .where('read_at', 'is', null)
    .returning(MESSAGE_COLUMNS)
    .execute();
  return rows
    .map((row) => ({ ...toMessage(row), ...(group !== null && { group }) }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}
