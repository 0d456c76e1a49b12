import { sql, type QueryCreator, type Selectable } from 'kysely';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Database } from '../schema.ts';
import type { Message } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import type { Executor } from '../database.ts';
import type { ChatsTable } from '../schema-identities.ts';

// Each number's chats, kept with the messages that touch them (migration 0021, ADR 0032): the
// chat list is then a page of this table in order of last activity, through its own index.

export type ChatRow = Selectable<ChatsTable>;

/** The chat a message belongs to: its group, or the other side by phone (by LID while the phone is unknown). */
function chatIdOf(message: Pick<Message, 'direction' | 'fromPhone' | 'fromLid' | 'toPhone' | 'group'>): string | undefined {
  if (message.group != null) return message.group.id;
  if (message.direction === 'outbound') return message.toPhone;
  return message.fromPhone ?? message.fromLid ?? undefined;
}

/**
 * Moves each message's chat to the top with it as the last message; a received one adds to the
 * unread count. Messages of one chat in one batch count once each but set the last message once,
 * since a statement may touch a row only once.
 */
export async function noteChatMessages(db: Executor, messages: readonly Message[]): Promise<void> {
  const chats = new Map<string, { message: Message; chatId: string; received: number }>();
  for (const message of messages) {
    const chatId = chatIdOf(message);
    if (chatId === undefined || message.numberId === null) continue;
    const key = `${message.numberId} ${chatId}`;
    const earlier = chats.get(key);
    const received = (earlier?.received ?? 0) + (message.direction === 'inbound' ? 1 : 0);
    const latest = earlier === undefined || message.createdAt >= earlier.message.createdAt ? message : earlier.message;
    chats.set(key, { message: latest, chatId, received });
  }
  if (chats.size === 0) return;
  // Rows in one order, by key: two batches committing side by side (PostgreSQL runs several) then
  // lock shared chats in the same order and wait for each other instead of deadlocking. The
  // statement's ORDER BY is what holds it; sorted here too, the plan's sort has nothing to move.
  const ordered = [...chats.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, chat]) => chat);
  if (runsOnPostgres(db)) {
    await noteChatsPostgres(db, {
      numberIds: ordered.map(({ message }) => message.numberId!),
      accountIds: ordered.map(({ message }) => message.accountId),
      chatIds: ordered.map(({ chatId }) => chatId),
      messageIds: ordered.map(({ message }) => message.id),
      ats: ordered.map(({ message }) => message.createdAt.getTime()),
      unread: ordered.map(({ received }) => received),
    });
    return;
  }
  const rows = ordered.map(({ message, chatId, received }) => ({
    n: message.numberId!,
    a: message.accountId,
    c: chatId,
    m: message.id,
    t: message.createdAt.getTime(),
    u: received,
  }));
  await noteChatsSqlite(db, { rows: JSON.stringify(rows) });
}

// Every batch of sends notes its chats, so the upsert is compiled once, with the rows as one
// parameter (a JSON array on SQLite, an array per column on PostgreSQL) whatever their number:
// built by Kysely for each batch it cost a send about 2.6 % of its CPU (issue 41).
type NotedChats = Database & {
  noted: {
    number_id: string;
    account_id: string;
    chat_id: string;
    last_message_id: string;
    last_activity_at: number;
    unread_count: number;
  };
};

const noteChatsPostgres = compiledStatement(
  (db, v: { numberIds: string[]; accountIds: string[]; chatIds: string[]; messageIds: string[]; ats: number[]; unread: number[] }) =>
    upsertChatsFrom(
      db.with('noted', (cte) =>
        cte.selectNoFrom([
          sql<string>`unnest(cast(${v.numberIds} as text[]))`.as('number_id'),
          sql<string>`unnest(cast(${v.accountIds} as text[]))`.as('account_id'),
          sql<string>`unnest(cast(${v.chatIds} as text[]))`.as('chat_id'),
          sql<string>`unnest(cast(${v.messageIds} as text[]))`.as('last_message_id'),
          sql<number>`unnest(cast(${v.ats} as bigint[]))`.as('last_activity_at'),
          sql<number>`unnest(cast(${v.unread} as int[]))`.as('unread_count'),
        ]),
      ),
    ),
);

const noteChatsSqlite = compiledStatement((db, v: { rows: string }) =>
  upsertChatsFrom(
    db.with('noted', (cte) =>
      cte
        .selectFrom(sql`json_each(${v.rows})`.as('r'))
        .select([
          sql<string>`r.value ->> 'n'`.as('number_id'),
          sql<string>`r.value ->> 'a'`.as('account_id'),
          sql<string>`r.value ->> 'c'`.as('chat_id'),
          sql<string>`r.value ->> 'm'`.as('last_message_id'),
          sql<number>`r.value ->> 't'`.as('last_activity_at'),
          sql<number>`r.value ->> 'u'`.as('unread_count'),
        ]),
    ),
  ),
);

/** The one upsert of both dialects, over the rows their `noted` table expression unpacks, in key order. */
function upsertChatsFrom(withNoted: QueryCreator<NotedChats>) {
  return (
    withNoted
      .insertInto('chats')
      .columns(['number_id', 'account_id', 'chat_id', 'last_message_id', 'last_activity_at', 'unread_count'])
      // `where true` tells SQLite's parser that the upsert's ON CONFLICT is not a join's ON.
      .expression((eb) =>
        eb
          .selectFrom('noted')
          .select(['number_id', 'account_id', 'chat_id', 'last_message_id', 'last_activity_at', 'unread_count'])
          .where(sql<boolean>`true`)
          // The key order the batches lock shared chats in, said rather than left to how unnest reads.
          .orderBy('number_id')
          .orderBy('chat_id'),
      )
      .onConflict((conflict) =>
        conflict.columns(['number_id', 'chat_id']).doUpdateSet({
          // A message that arrives late (stamped by the sender's phone) does not take the top back.
          last_message_id: sql`case when excluded.last_activity_at >= chats.last_activity_at then excluded.last_message_id else chats.last_message_id end`,
          last_activity_at: sql`case when excluded.last_activity_at >= chats.last_activity_at then excluded.last_activity_at else chats.last_activity_at end`,
          unread_count: sql`chats.unread_count + excluded.unread_count`,
        }),
      )
  );
}

/** The chat known by a LID becomes the chat of its phone: one person, one chat. */
export async function mergeChatOfLid(db: Executor, numberId: string, identity: { lid: string; phone: E164 }): Promise<void> {
  const lidChat = await findChat(db, numberId, identity.lid);
  if (lidChat === undefined) return;
  const phoneChat = await findChat(db, numberId, identity.phone);
  if (phoneChat === undefined) {
    await db
      .updateTable('chats')
      .set({ chat_id: identity.phone })
      .where('number_id', '=', numberId)
      .where('chat_id', '=', identity.lid)
      .execute();
    return;
  }
  const lidIsLater = Number(lidChat.last_activity_at) > Number(phoneChat.last_activity_at);
  await db.deleteFrom('chats').where('number_id', '=', numberId).where('chat_id', '=', identity.lid).execute();
  await db
    .updateTable('chats')
    .where('number_id', '=', numberId)
    .where('chat_id', '=', identity.phone)
    .set({
      ...(lidIsLater && { last_message_id: lidChat.last_message_id, last_activity_at: lidChat.last_activity_at }),
      unread_count: phoneChat.unread_count + lidChat.unread_count,
      marked_unread: Math.max(phoneChat.marked_unread, lidChat.marked_unread),
      archived: phoneChat.archived,
    })
    .execute();
}

/** Reading a message reads its chat, unless a later message arrived since. */
export async function clearUnreadThrough(db: Executor, message: Message): Promise<void> {
  const chatId = chatIdOf(message);
  if (chatId === undefined || message.numberId === null) return;
  await db
    .updateTable('chats')
    .set({ unread_count: 0, marked_unread: 0 })
    .where('number_id', '=', message.numberId)
    .where('chat_id', '=', chatId)
    .where('last_activity_at', '<=', message.createdAt.getTime())
    .execute();
}

export async function findChat(db: Executor, numberId: string, chatId: string): Promise<ChatRow | undefined> {
  return db.selectFrom('chats').selectAll().where('number_id', '=', numberId).where('chat_id', '=', chatId).executeTakeFirst();
}

export interface ChatPosition {
  lastActivityAt: number;
  chatId: string;
}

/** A page of the number's chats, latest activity first, after `before`: one index range scan. */
export async function listChats(
  db: Executor,
  numberId: string,
  before: ChatPosition | undefined,
  limit: number,
  offset = 0,
): Promise<ChatRow[]> {
  let query = db.selectFrom('chats').selectAll().where('number_id', '=', numberId);
  // A row-value comparison, which both databases read as one range of the index; the same
  // condition spelled with OR makes SQLite walk the number's chats from the top.
  if (before !== undefined)
    query = query.where((eb) => eb(eb.refTuple('last_activity_at', 'chat_id'), '<', eb.tuple(before.lastActivityAt, before.chatId)));
  return query.orderBy('last_activity_at', 'desc').orderBy('chat_id', 'desc').limit(limit).offset(offset).execute();
}

export interface ChatStateChange {
  archived?: number;
  marked_unread?: number;
  unread_count?: number;
  pinned_at?: number | null;
  muted_until?: number | null;
}

/** Changes a chat's state; answers the chat as it is now, or undefined when the number has no such chat. */
export async function changeChatState(
  db: Executor,
  numberId: string,
  chatId: string,
  change: ChatStateChange,
): Promise<ChatRow | undefined> {
  await db.updateTable('chats').set(change).where('number_id', '=', numberId).where('chat_id', '=', chatId).execute();
  return findChat(db, numberId, chatId);
}

/** A chat of the account as the dashboard's chat list shows it: its row, with the names it is known by. */
export interface NamedChatRow extends ChatRow {
  /** The person's name on WhatsApp, as the number's contacts know it; null for a group or when unknown. */
  contact_name: string | null;
  /** The group's subject, as the number last saw it; null for a direct chat or when unknown. */
  group_subject: string | null;
}

/**
 * The account's chats on the given numbers, latest activity first, with the names each is known
 * by; narrowed by `search` (a piece of the phone, the group id, the contact's name or the group's
 * subject, any case).
 */
export async function listNamedChats(
  db: Executor,
  accountId: string,
  numberIds: readonly string[],
  search: string | undefined,
  limit: number,
): Promise<NamedChatRow[]> {
  if (numberIds.length === 0) return [];
  let query = selectNamedChats(db).where('chats.account_id', '=', accountId).where('chats.number_id', 'in', numberIds);
  // LIKE's wildcards in the search are dropped rather than escaped: no phone, id or name needs
  // them, and the two databases spell an escape differently.
  const term = search
    ?.replace(/[%_\\]/g, '')
    .trim()
    .toLowerCase();
  if (term !== undefined && term !== '') {
    const pattern = `%${term}%`;
    const digits = term.replace(/[^\d]/g, '');
    query = query.where((eb) =>
      eb.or([
        eb(sql<string>`lower(chats.chat_id)`, 'like', pattern),
        ...(digits.length >= 3 && digits !== term ? [eb('chats.chat_id', 'like', `%${digits}%`)] : []),
        eb.exists(
          eb
            .selectFrom('contacts')
            .select(sql`1`.as('one'))
            .whereRef('contacts.number_id', '=', 'chats.number_id')
            .where((inner) =>
              inner.or([inner('contacts.phone', '=', inner.ref('chats.chat_id')), inner('contacts.lid', '=', inner.ref('chats.chat_id'))]),
            )
            .where(sql<string>`lower(contacts.whatsapp_name)`, 'like', pattern),
        ),
        eb.exists(
          eb
            .selectFrom('number_groups')
            .select(sql`1`.as('one'))
            .whereRef('number_groups.number_id', '=', 'chats.number_id')
            .whereRef('number_groups.group_id', '=', 'chats.chat_id')
            .where(sql<string>`lower(number_groups.subject)`, 'like', pattern),
        ),
      ]),
    );
  }
  return query.orderBy('chats.last_activity_at', 'desc').orderBy('chats.chat_id', 'desc').limit(limit).execute();
}

/** One chat of the number with the names it is known by, as listNamedChats reads them; undefined when the number has no such chat. */
export async function findNamedChat(db: Executor, numberId: string, chatId: string): Promise<NamedChatRow | undefined> {
  return selectNamedChats(db).where('chats.number_id', '=', numberId).where('chats.chat_id', '=', chatId).executeTakeFirst();
}

/**
 * Chats with the names each is known by: the contact's WhatsApp name and the group's subject, by
 * correlated subqueries on each table's own key, so that a person with two rows in the map
 * (phone and LID) cannot yield a chat twice, as a join could.
 */
function selectNamedChats(db: Executor) {
  return db
    .selectFrom('chats')
    .selectAll('chats')
    .select((eb) => [
      eb
        .selectFrom('contacts')
        .select('contacts.whatsapp_name')
        .whereRef('contacts.number_id', '=', 'chats.number_id')
        .where((inner) =>
          inner.or([inner('contacts.phone', '=', inner.ref('chats.chat_id')), inner('contacts.lid', '=', inner.ref('chats.chat_id'))]),
        )
        .where('contacts.whatsapp_name', 'is not', null)
        .limit(1)
        .as('contact_name'),
      eb
        .selectFrom('number_groups')
        .select('number_groups.subject')
        .whereRef('number_groups.number_id', '=', 'chats.number_id')
        .whereRef('number_groups.group_id', '=', 'chats.chat_id')
        .limit(1)
        .as('group_subject'),
    ]);
}
