import { AppError } from '../domain/errors.ts';
import type { Message, MessageDirection } from '../domain/model.ts';
import { parseE164 } from '../domain/phone.ts';
import type { Store } from '../store/database.ts';
import { listMessages } from '../store/repositories/messages.ts';
import type { AccountScope } from '../domain/tenant-scope.ts';

export interface HistoryQuery {
  numberId?: string;
  direction?: MessageDirection;
  /** Either end of the conversation, in any common spelling. */
  phone?: string;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  limit: number;
}

export interface HistoryPage {
  messages: Message[];
  /** Present when older messages exist. */
  nextCursor: string | undefined;
}

/** An account's sent and received messages, newest first, a page at a time. */
export class MessageHistoryService {
  constructor(private readonly store: Store) {}

  async page(scope: AccountScope, query: HistoryQuery): Promise<HistoryPage> {
    let phone: string | undefined;
    if (query.phone !== undefined) {
      phone = parseE164(query.phone);
      if (phone === undefined) throw new AppError('invalid_phone_number', `"${query.phone}" is not a phone number; include the country code, e.g. +447700900123.`);
    }
    // One extra row tells whether another page exists without a count query.
    const rows = await listMessages(this.store.db, {
      accountId: scope.accountId,
      ...(query.numberId !== undefined && { numberId: query.numberId }),
      ...(query.direction !== undefined && { direction: query.direction }),
      ...(phone !== undefined && { phone }),
      ...(query.cursor !== undefined && { before: parseCursor(query.cursor) }),
      limit: query.limit + 1,
    });
    const messages = rows.slice(0, query.limit);
    const last = messages.at(-1);
    return { messages, nextCursor: rows.length > query.limit && last !== undefined ? `${last.createdAt.getTime()}.${last.id}` : undefined };
  }
}

function parseCursor(cursor: string): { createdAt: Date; id: string } {
  const match = /^(\d{1,15})\.(msg_[0-9a-z]{26})$/.exec(cursor);
  if (match === null) throw new AppError('invalid_argument', 'The page link is not valid; start again from the first page.');
  return { createdAt: new Date(Number(match[1])), id: match[2]! };
}
