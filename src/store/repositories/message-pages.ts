import type { Message, MessageDirection, MessageStatus } from '../../domain/model.ts';
import type { Executor } from '../database.ts';
import { toMessage } from './messages.ts';
import { withGroup } from './groups.ts';
import { withReferral } from './message-referrals.ts';

// GET /messages and the dashboard's list: an account's messages a page at a time, newest first,
// each through an index ordered by time (migration 0014), with what it quotes.

export interface MessageFilter {
  accountId: string;
  numberId?: string;
  direction?: MessageDirection;
  /** Matches either end of the conversation by phone; a sender known only by LID never matches. */
  phone?: string;
  /** The other side: the recipient of an outbound message, the sender of an inbound one. */
  peer?: string;
  status?: MessageStatus;
  /** Received from this LID, whose phone no map knows yet (once it is known, the phone is filled in). */
  unresolvedLid?: string;
  /** Messages of this group chat, sent and received (the account's own record of them). */
  groupId?: string;
  /** Created at or after `since`, and before `until`. */
  since?: Date;
  until?: Date;
  /** Keyset pagination: only messages older than this one. */
  before?: { createdAt: Date; id: string };
  limit: number;
  /** How many messages to skip before the page starts (after `before`, when given). */
  offset?: number;
}

/**
 * Newest first. A peer is the recipient of a sent message and the sender of a received one:
 * two columns, so without a direction the two sides are read as two index-ordered queries and
 * merged, which both databases plan well, where one OR across the columns makes SQLite scan.
 */
export async function listMessages(db: Executor, filter: MessageFilter): Promise<Message[]> {
  if (filter.peer !== undefined && filter.direction === undefined) {
    // Each side's first offset + limit holds the merged page's.
    const offset = filter.offset ?? 0;
    const sides = { ...filter, limit: offset + filter.limit, offset: 0 };
    const [sent, received] = await Promise.all([
      listMessages(db, { ...sides, direction: 'outbound' }),
      listMessages(db, { ...sides, direction: 'inbound' }),
    ]);
    return [...sent, ...received].sort(newestFirst).slice(offset, offset + filter.limit);
  }
  let query = db.selectFrom('messages').selectAll().where('account_id', '=', filter.accountId);
  if (filter.numberId !== undefined) query = query.where('number_id', '=', filter.numberId);
  if (filter.direction !== undefined) query = query.where('direction', '=', filter.direction);
  const phone = filter.phone;
  if (phone !== undefined) query = query.where((eb) => eb.or([eb('from_phone', '=', phone), eb('to_phone', '=', phone)]));
  if (filter.peer !== undefined) query = query.where(filter.direction === 'outbound' ? 'to_phone' : 'from_phone', '=', filter.peer);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.unresolvedLid !== undefined) query = query.where('from_lid', '=', filter.unresolvedLid).where('from_phone', 'is', null);
  const groupId = filter.groupId;
  if (groupId !== undefined) {
    query = query.where(
      'id',
      'in',
      db.selectFrom('message_groups').select('message_id').where('account_id', '=', filter.accountId).where('group_id', '=', groupId),
    );
  }
  if (filter.since !== undefined) query = query.where('created_at', '>=', filter.since.getTime());
  if (filter.until !== undefined) query = query.where('created_at', '<', filter.until.getTime());
  const before = filter.before;
  if (before !== undefined) {
    const at = before.createdAt.getTime();
    query = query.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', before.id)])]));
  }
  // What each message of the page quotes comes with it, by the replies' primary key, rather
  // than in a second round trip: a left join on the page alone, after its limit.
  const page = query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit)
    .offset(filter.offset ?? 0);
  const rows = await db
    .with('page', () => page)
    .selectFrom('page')
    .leftJoin('message_replies', 'message_replies.message_id', 'page.id')
    .leftJoin('message_groups', 'message_groups.message_id', 'page.id')
    .leftJoin('message_referrals', 'message_referrals.message_id', 'page.id')
    .selectAll('page')
    .select([
      'message_replies.quoted_message_id',
      'message_replies.quoted_engine_id',
      'message_groups.group_id',
      'message_groups.group_subject',
      'message_groups.mentions',
      'message_referrals.referral',
    ])
    .orderBy('page.created_at', 'desc')
    .orderBy('page.id', 'desc')
    .execute();
  return rows.map((row) => ({
    ...withReferral(withGroup(toMessage(row), row), row),
    replyTo: row.quoted_engine_id === null ? null : { messageId: row.quoted_message_id, engineMessageId: row.quoted_engine_id },
  }));
}

function newestFirst(a: Message, b: Message): number {
  return b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}
