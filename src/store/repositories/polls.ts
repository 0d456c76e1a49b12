import type { Executor } from '../database.ts';
import { groupedByMessage } from './grouped-rows.ts';

/** One voter's current selection of a poll. */
export interface PollSelection {
  voter: string;
  voterPhone: string | null;
  voterLid: string | null;
  options: string[];
  votedAt: Date;
}

/** Keeps the message secret WhatsApp encrypts a poll's votes with (base64). */
export async function savePollSecret(db: Executor, messageId: string, secret: string): Promise<void> {
  await db
    .insertInto('poll_secrets')
    .values({ message_id: messageId, secret })
    .onConflict((conflict) => conflict.column('message_id').doNothing())
    .execute();
}

export async function findPollSecret(db: Executor, messageId: string): Promise<string | undefined> {
  const row = await db.selectFrom('poll_secrets').select('secret').where('message_id', '=', messageId).executeTakeFirst();
  return row?.secret;
}

/**
 * Sets a voter's selection, replacing the one before; an empty selection removes it (WhatsApp
 * sends one when a voter takes every choice back). Answers whether anything changed, so that a
 * vote delivered twice is reported once. A vote older than the one kept is ignored.
 */
export async function saveSelection(db: Executor, messageId: string, selection: PollSelection): Promise<boolean> {
  const current = await db
    .selectFrom('poll_votes')
    .select(['options', 'voted_at'])
    .where('message_id', '=', messageId)
    .where('voter', '=', selection.voter)
    .executeTakeFirst();
  const options = JSON.stringify(selection.options);
  if (current !== undefined && Number(current.voted_at) > selection.votedAt.getTime()) return false;
  if (current === undefined ? selection.options.length === 0 : current.options === options) return false;
  if (current !== undefined)
    await db.deleteFrom('poll_votes').where('message_id', '=', messageId).where('voter', '=', selection.voter).execute();
  if (selection.options.length === 0) return true;
  await db
    .insertInto('poll_votes')
    .values({
      message_id: messageId,
      voter: selection.voter,
      voter_phone: selection.voterPhone,
      voter_lid: selection.voterLid,
      options,
      voted_at: selection.votedAt.getTime(),
    })
    .execute();
  return true;
}

/** Every voter's current selection of the poll, oldest vote first. */
export async function listSelections(db: Executor, messageId: string): Promise<PollSelection[]> {
  return (await listSelectionsOf(db, [messageId])).get(messageId) ?? [];
}

/** Every voter's current selection of each of the polls, oldest vote first: one query for the lot; a poll without votes is absent. */
export async function listSelectionsOf(db: Executor, messageIds: readonly string[]): Promise<Map<string, PollSelection[]>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('poll_votes')
    .selectAll()
    .where('message_id', 'in', messageIds)
    .orderBy('voted_at')
    .orderBy('voter')
    .execute();
  return groupedByMessage(rows, (row) => ({
    voter: row.voter,
    voterPhone: row.voter_phone,
    voterLid: row.voter_lid,
    options: JSON.parse(row.options) as string[],
    votedAt: new Date(Number(row.voted_at)),
  }));
}
