import type { MediaKind } from '../../domain/media.ts';
import type { Executor } from '../database.ts';
import type { MediaDownloadsTable } from '../schema-media.ts';

/** An incoming file still to be fetched, after its first download failed. */
export interface PendingDownload {
  messageId: string;
  accountId: string;
  numberId: string;
  kind: MediaKind;
  fileName: string | null;
  engineToken: string;
  attempts: number;
  lastReason: string;
  nextAttemptAt: Date;
  createdAt: Date;
}

function toPending(row: MediaDownloadsTable): PendingDownload {
  return {
    messageId: row.message_id,
    accountId: row.account_id,
    numberId: row.number_id,
    kind: row.kind as MediaKind,
    fileName: row.file_name,
    engineToken: row.engine_token,
    attempts: Number(row.attempts),
    lastReason: row.last_reason,
    nextAttemptAt: new Date(Number(row.next_attempt_at)),
    createdAt: new Date(Number(row.created_at)),
  };
}

/** Written in the transaction that stores the message, so a retry is never promised and then lost. */
export async function insertPendingDownload(db: Executor, pending: PendingDownload): Promise<void> {
  await db
    .insertInto('media_downloads')
    .values({
      message_id: pending.messageId,
      account_id: pending.accountId,
      number_id: pending.numberId,
      kind: pending.kind,
      file_name: pending.fileName,
      engine_token: pending.engineToken,
      attempts: pending.attempts,
      last_reason: pending.lastReason,
      next_attempt_at: pending.nextAttemptAt.getTime(),
      created_at: pending.createdAt.getTime(),
    })
    .execute();
}

/** Downloads due by `now` for the given numbers (those whose sessions this node runs), soonest first. */
export async function listDueDownloads(db: Executor, numberIds: readonly string[], now: Date, limit: number): Promise<PendingDownload[]> {
  if (numberIds.length === 0) return [];
  const rows = await db
    .selectFrom('media_downloads')
    .selectAll()
    .where('next_attempt_at', '<=', now.getTime())
    .where('number_id', 'in', numberIds)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map(toPending);
}

/**
 * Takes a due download for one attempt by moving its next attempt to `until`, only if nobody
 * moved it first: a node that loses the race leaves it alone, and a node that crashes mid-attempt
 * leaves it due again at `until`.
 */
export async function claimDownload(db: Executor, pending: PendingDownload, until: Date): Promise<boolean> {
  const result = await db
    .updateTable('media_downloads')
    .set({ next_attempt_at: until.getTime() })
    .where('message_id', '=', pending.messageId)
    .where('next_attempt_at', '=', pending.nextAttemptAt.getTime())
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function rescheduleDownload(db: Executor, messageId: string, attempts: number, reason: string, next: Date): Promise<void> {
  await db
    .updateTable('media_downloads')
    .set({ attempts, last_reason: reason, next_attempt_at: next.getTime() })
    .where('message_id', '=', messageId)
    .execute();
}

/** Ends the retries; false when another node already ended them. */
export async function deletePendingDownload(db: Executor, messageId: string): Promise<boolean> {
  const result = await db.deleteFrom('media_downloads').where('message_id', '=', messageId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** The message now carries the file it arrived with. */
export async function attachReceivedMedia(db: Executor, messageId: string, mediaId: string): Promise<void> {
  await db.updateTable('messages').set({ media_id: mediaId }).where('id', '=', messageId).where('media_id', 'is', null).execute();
}
