import { AppError } from '../domain/errors.ts';
import type { Message } from '../domain/model.ts';
import { parseE164 } from '../domain/phone.ts';
import { parsePersonRef } from '../domain/identities.ts';
import { phoneOfLidInAccount } from '../store/repositories/contacts.ts';
import type { Store } from '../store/database.ts';
import { findMessageById, findMessagesByIds } from '../store/repositories/messages.ts';
import { listMessages, type MessageFilter } from '../store/repositories/message-pages.ts';
import { findReplies, listReactionsOf, listRevisionsOf, type Reaction, type Revision } from '../store/repositories/conversations.ts';
import type { AccountScope } from '../domain/tenant-scope.ts';

/**
 * A page's filters as the repository takes them, but with `phone` in any common spelling (it is
 * normalised here) and a cursor in place of the keyset position it stands for.
 */
export type HistoryQuery = Omit<MessageFilter, 'accountId' | 'before' | 'unresolvedLid'> & {
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  /** The person on the other side, by phone or by LID: one conversation whichever they wrote by. */
  with?: string;
};

/** What happened to a message since it was stored: the reactions on it now, and the texts it had before. */
export interface MessageChanges {
  reactions: Reaction[];
  revisions: Revision[];
}

export interface HistoryPage {
  messages: Message[];
  /** Present when older messages exist. */
  nextCursor: string | undefined;
}

/** An account's sent and received messages, newest first, a page at a time. */
export class MessageHistoryService {
  constructor(private readonly store: Store) {}

  /** One message of the account; another account's is no different from none. */
  async find(scope: AccountScope, id: string): Promise<Message> {
    const message = await findMessageById(this.store.db, id);
    if (message === undefined || message.accountId !== scope.accountId)
      throw new AppError('message_not_found', `There is no message ${id} in your account.`, { field: 'id' });
    const [withReply] = await this.withReplies([message]);
    return withReply!;
  }

  /** What happened to a message since: the reactions on it now, and the texts it had before. */
  async changes(message: Message): Promise<MessageChanges> {
    return (await this.changesOf([message])).get(message.id)!;
  }

  /** What happened to each of the messages since, by its id: two queries for the lot, whatever their number. */
  async changesOf(messages: readonly Message[]): Promise<Map<string, MessageChanges>> {
    const ids = messages.map((message) => message.id);
    const [reactions, revisions] = await Promise.all([listReactionsOf(this.store.db, ids), listRevisionsOf(this.store.db, ids)]);
    return new Map(ids.map((id) => [id, { reactions: reactions.get(id) ?? [], revisions: revisions.get(id) ?? [] }]));
  }

  /** Those of the messages that are the account's, by id, each with what it quotes; the others are left out. */
  async findEach(scope: AccountScope, ids: readonly string[]): Promise<Map<string, Message>> {
    const found = (await findMessagesByIds(this.store.db, ids)).filter((message) => message.accountId === scope.accountId);
    return new Map((await this.withReplies(found)).map((message) => [message.id, message]));
  }

  /** The messages, each with what it quotes: one query for the lot. */
  private async withReplies(messages: Message[]): Promise<Message[]> {
    const replies = await findReplies(
      this.store.db,
      messages.map((message) => message.id),
    );
    return messages.map((message) => ({ ...message, replyTo: replies.get(message.id) ?? null }));
  }

  async page(scope: AccountScope, query: HistoryQuery): Promise<HistoryPage> {
    let phone: string | undefined;
    if (query.phone !== undefined) {
      phone = parseE164(query.phone);
      if (phone === undefined)
        throw new AppError('invalid_phone_number', `"${query.phone}" is not a phone number; include the country code, e.g. +447700900123.`);
    }
    // One extra row tells whether another page exists without a count query.
    const { cursor, phone: _spelled, with: person, ...filters } = query;
    const rows = await listMessages(this.store.db, {
      ...filters,
      ...(person !== undefined && (await this.personFilter(scope, person, query.numberId))),
      accountId: scope.accountId,
      ...(phone !== undefined && { phone }),
      ...(cursor !== undefined && { before: parseCursor(cursor) }),
      limit: query.limit + 1,
    });
    // Listed messages come with what they quote.
    const messages = rows.slice(0, query.limit);
    const last = messages.at(-1);
    return { messages, nextCursor: rows.length > query.limit && last !== undefined ? `${last.createdAt.getTime()}.${last.id}` : undefined };
  }

  /**
   * The other side as one person: a LID whose phone a map knows is that phone (its messages had
   * the phone filled in when it was learned); one no map knows matches what came by that LID.
   */
  private async personFilter(
    scope: AccountScope,
    raw: string,
    numberId: string | undefined,
  ): Promise<Pick<MessageFilter, 'peer' | 'unresolvedLid'>> {
    const person = parsePersonRef(raw);
    if (person === undefined)
      throw new AppError(
        'invalid_request',
        `with "${raw.slice(0, 64)}" is neither a phone (with its country code) nor a LID (<digits>@lid).`,
        { field: 'with' },
      );
    if ('phone' in person) return { peer: person.phone };
    const phone = await phoneOfLidInAccount(this.store.db, scope.accountId, person.lid, numberId);
    return phone === undefined ? { unresolvedLid: person.lid } : { peer: phone };
  }
}

function parseCursor(cursor: string): { createdAt: Date; id: string } {
  const match = /^(\d{1,15})\.(msg_[0-9a-z]{26})$/.exec(cursor);
  if (match === null)
    throw new AppError('invalid_request', 'The page link is not valid; start again from the first page.', { field: 'cursor' });
  return { createdAt: new Date(Number(match[1])), id: match[2]! };
}
