import { AppError } from '../domain/errors.ts';
import { isLid, parsePersonRef } from '../domain/identities.ts';
import type { Message, MessageGroup, WhatsAppNumber } from '../domain/model.ts';
import type { AccountScope } from '../domain/tenant-scope.ts';
import type { E164 } from '../domain/phone.ts';
import type { ChatChange, ChatTarget } from '../engines/engine.ts';
import type { Store } from '../store/database.ts';
import {
  changeChatState,
  findChat,
  findNamedChat,
  listChats,
  listNamedChats,
  type ChatRow,
  type ChatStateChange,
  type NamedChatRow,
} from '../store/repositories/chats.ts';
import { identitiesOf, phoneOfLid } from '../store/repositories/contacts.ts';
import { findMessagesByIds } from '../store/repositories/messages.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/** "Always", for a mute without an end: the last millisecond of year 9999. */
export const MUTED_FOREVER = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));

/** A chat of a number as the chat list shows it. */
export interface ChatSummary {
  chatId: string;
  /** The other side of a direct chat, both ways where known. */
  phone: E164 | null;
  lid: string | null;
  /** The group of a group chat, with its subject as the last message knew it. */
  group: MessageGroup | null;
  lastMessage: Message;
  lastActivityAt: Date;
  unreadCount: number;
  markedUnread: boolean;
  archived: boolean;
  pinnedAt: Date | null;
  mutedUntil: Date | null;
}

/** A chat of one of the account's numbers, with the name it goes by (the dashboard's chat list). */
export interface NamedChat extends ChatSummary {
  numberId: string;
  /** The person's WhatsApp name, or the group's subject; null when neither is known. */
  name: string | null;
}

export interface ChatPage {
  chats: ChatSummary[];
  nextCursor: string | undefined;
}

/**
 * Each number's chats, latest activity first, and their state (ADR 0032). A person is one chat:
 * a chat with a LID becomes the chat with the phone when the phone is learned. A change is made
 * on WhatsApp first and recorded once it took, as message actions are (ADR 0022).
 */
export class ChatService {
  constructor(
    private readonly store: Store,
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
  ) {}

  async page(number: WhatsAppNumber, cursor: string | undefined, limit: number, offset = 0): Promise<ChatPage> {
    const rows = await listChats(this.store.db, number.id, cursor === undefined ? undefined : parseCursor(cursor), limit + 1, offset);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      chats: await this.summaries(number, page),
      nextCursor: rows.length > limit && last !== undefined ? `${last.last_activity_at}.${last.chat_id}` : undefined,
    };
  }

  /**
   * The chats of the account's numbers together, latest activity first, narrowed by a piece of
   * a phone or a name; `numbers` are the scope's own, so no other account's chat can be listed.
   */
  async named(scope: AccountScope, numbers: readonly WhatsAppNumber[], search: string | undefined, limit: number): Promise<NamedChat[]> {
    const rows = await listNamedChats(
      this.store.db,
      scope.accountId,
      numbers.map((number) => number.id),
      search,
      limit,
    );
    const byNumber = new Map<string, typeof rows>();
    for (const row of rows) byNumber.set(row.number_id, [...(byNumber.get(row.number_id) ?? []), row]);
    const named = new Map<string, NamedChat>();
    for (const number of numbers) {
      const numberRows = byNumber.get(number.id) ?? [];
      for (const summary of await this.summaries(number, numberRows)) {
        const row = numberRows.find((candidate) => candidate.chat_id === summary.chatId)!;
        named.set(`${number.id} ${summary.chatId}`, namedChat(number, summary, row));
      }
    }
    return rows.flatMap((row) => named.get(`${row.number_id} ${row.chat_id}`) ?? []);
  }

  async find(number: WhatsAppNumber, rawChat: string): Promise<ChatSummary> {
    const row = await this.row(number, rawChat);
    return (await this.summaries(number, [row]))[0]!;
  }

  /** One chat, by what a path names, with the name it goes by: what `named` lists of it, however old it is. */
  async findNamed(number: WhatsAppNumber, rawChat: string): Promise<NamedChat> {
    const row = await this.rowBy(number, rawChat, findNamedChat);
    return namedChat(number, (await this.summaries(number, [row]))[0]!, row);
  }

  async change(number: WhatsAppNumber, rawChat: string, change: ChatChange): Promise<ChatSummary> {
    const row = await this.row(number, rawChat);
    const [last] = await findMessagesByIds(this.store.db, [row.last_message_id]);
    if (last?.engineMessageId == null)
      throw new AppError('chat_not_found', `The chat ${row.chat_id} has no message WhatsApp knows yet.`, { field: 'chat' });
    await this.supervisor.sessionFor(number).modifyChat(chatTarget(row.chat_id, last), change);
    const changed = await changeChatState(this.store.db, number.id, row.chat_id, stateChange(change, new Date()));
    return (await this.summaries(number, [changed ?? row]))[0]!;
  }

  /** The chat a path names: a group id, a LID (the phone's chat once the map knows it), or a phone. */
  private row(number: WhatsAppNumber, raw: string): Promise<ChatRow> {
    return this.rowBy(number, raw, findChat);
  }

  private async rowBy<Row>(
    number: WhatsAppNumber,
    raw: string,
    read: (db: Store['db'], numberId: string, chatId: string) => Promise<Row | undefined>,
  ): Promise<Row> {
    const chatId = await this.chatIdOf(number, raw.trim());
    const row = chatId === undefined ? undefined : await read(this.store.db, number.id, chatId);
    if (row === undefined) throw new AppError('chat_not_found', `${number.phone} has no chat with ${raw.slice(0, 64)}.`, { field: 'chat' });
    return row;
  }

  private async chatIdOf(number: WhatsAppNumber, raw: string): Promise<string | undefined> {
    if (raw.endsWith('@g.us')) return raw;
    const person = parsePersonRef(raw);
    if (person === undefined) return undefined;
    if ('phone' in person) return person.phone;
    return (await phoneOfLid(this.store.db, number.id, person.lid)) ?? person.lid;
  }

  private async summaries(number: WhatsAppNumber, rows: readonly ChatRow[]): Promise<ChatSummary[]> {
    const [messages, people] = await Promise.all([
      findMessagesByIds(
        this.store.db,
        rows.map((row) => row.last_message_id),
      ),
      identitiesOf(
        this.store.db,
        number.id,
        rows.map((row) => row.chat_id).filter((chatId) => !chatId.endsWith('@g.us')),
      ),
    ]);
    const byId = new Map(messages.map((message) => [message.id, message]));
    return rows.flatMap((row) => {
      const lastMessage = byId.get(row.last_message_id);
      if (lastMessage === undefined) return [];
      const group = row.chat_id.endsWith('@g.us') ? (lastMessage.group ?? { id: row.chat_id, subject: null }) : null;
      const person = people.find((known) => known.phone === row.chat_id || known.lid === row.chat_id);
      return [
        {
          chatId: row.chat_id,
          phone: group === null ? (person?.phone ?? (isLid(row.chat_id) ? null : (row.chat_id as E164))) : null,
          lid: group === null ? (person?.lid ?? (isLid(row.chat_id) ? row.chat_id : null)) : null,
          group,
          lastMessage,
          lastActivityAt: new Date(Number(row.last_activity_at)),
          unreadCount: row.unread_count,
          markedUnread: row.marked_unread === 1,
          archived: row.archived === 1,
          pinnedAt: row.pinned_at === null ? null : new Date(Number(row.pinned_at)),
          mutedUntil: row.muted_until === null ? null : new Date(Number(row.muted_until)),
        },
      ];
    });
  }
}

/** The chat with the name it goes by: the person's WhatsApp name, else the group's subject as the number or its last message knows it. */
function namedChat(number: WhatsAppNumber, summary: ChatSummary, row: NamedChatRow): NamedChat {
  return { ...summary, numberId: number.id, name: row.contact_name ?? row.group_subject ?? summary.group?.subject ?? null };
}

function chatTarget(chatId: string, last: Message): ChatTarget {
  const fromMe = last.direction === 'outbound';
  const participant = last.group != null && !fromMe ? (last.fromPhone ?? last.fromLid ?? undefined) : undefined;
  return {
    chatId,
    lastMessage: { engineMessageId: last.engineMessageId!, fromMe, ...(participant !== undefined && { participant }), at: last.createdAt },
  };
}

/** What the change leaves in the chat's row; reading it clears its unread count too. */
function stateChange(change: ChatChange, at: Date): ChatStateChange {
  switch (change.kind) {
    case 'archive':
      return { archived: change.archived ? 1 : 0 };
    case 'pin':
      return { pinned_at: change.pinned ? at.getTime() : null };
    case 'mute':
      return { muted_until: change.until?.getTime() ?? null };
    case 'mark_unread':
      return change.unread ? { marked_unread: 1 } : { marked_unread: 0, unread_count: 0 };
  }
}

function parseCursor(cursor: string): { lastActivityAt: number; chatId: string } {
  const match = /^(\d{1,15})\.(.{1,128})$/.exec(cursor);
  if (match === null)
    throw new AppError('invalid_request', 'The page link is not valid; start again from the first page.', { field: 'cursor' });
  return { lastActivityAt: Number(match[1]), chatId: match[2]! };
}
