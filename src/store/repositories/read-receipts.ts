import type { Message } from '../../domain/model.ts';
import type { Executor } from '../database.ts';
import { MESSAGE_COLUMNS, toMessage } from './messages.ts';

/** At most this many earlier messages are settled by one read receipt; older ones were long since read or are long forgotten. */
const MOST_SETTLED = 100;

/**
 * A read receipt on a message means the recipient read the chat up to it, as WhatsApp means it:
 * our earlier messages in the same chat still marked sent or delivered are read too. Returns
 * those it moved, newest first, each to be reported.
 */
export async function markEarlierRead(
  db: Executor,
  read: Pick<Message, 'id' | 'fromPhone' | 'toPhone' | 'createdAt'>,
  at: Date,
): Promise<Message[]> {
  if (read.fromPhone === null) return [];
  const earlier = await db
    .selectFrom('messages')
    .select('id')
    .where('from_phone', '=', read.fromPhone)
    .where('to_phone', '=', read.toPhone)
    .where('direction', '=', 'outbound')
    .where('status', 'in', ['sent', 'delivered'])
    .where('created_at', '<=', read.createdAt.getTime())
    .where('id', '!=', read.id)
    .orderBy('created_at', 'desc')
    .limit(MOST_SETTLED)
    .execute();
  if (earlier.length === 0) return [];
  const rows = await db
    .updateTable('messages')
    .set({ status: 'read', updated_at: at.getTime(), read_at: at.getTime() })
    .where(
      'id',
      'in',
      earlier.map((row) => row.id),
    )
    // Checked again in the write: a receipt that moved one meanwhile is not undone.
    .where('status', 'in', ['sent', 'delivered'])
    .returning(MESSAGE_COLUMNS)
    .execute();
  return rows.map(toMessage).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}
