import type { MediaKind, MediaObject, MediaSource } from '../../domain/media.ts';
import type { Executor } from '../database.ts';
import { lockAccount } from './accounts.ts';
import type { MediaTable } from '../schema-media.ts';

function toMedia(row: MediaTable): MediaObject {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as MediaKind,
    mimeType: row.mime_type,
    size: Number(row.size),
    sha256: row.sha256,
    fileName: row.file_name,
    source: row.source as MediaSource,
    createdAt: new Date(Number(row.created_at)),
    expiresAt: new Date(Number(row.expires_at)),
  };
}

export async function insertMedia(db: Executor, media: MediaObject & { expiresAt: Date }): Promise<void> {
  await db
    .insertInto('media')
    .values({
      id: media.id,
      account_id: media.accountId,
      kind: media.kind,
      mime_type: media.mimeType,
      size: media.size,
      sha256: media.sha256,
      file_name: media.fileName,
      source: media.source,
      created_at: media.createdAt.getTime(),
      expires_at: media.expiresAt.getTime(),
      removed_at: null,
    })
    .execute();
}

/**
 * Writes the row of a file the account put in itself only if the files it holds, with this one,
 * stay within `limitBytes` (each distinct file once, as mediaBytesHeld counts). The count and the
 * insert run under the account's lock, so two files finishing at once, on this node or another,
 * cannot both pass on the same count. Answers undefined when written, else the bytes held.
 */
export async function insertMediaWithinQuota(
  trx: Executor,
  dialect: 'sqlite' | 'postgres',
  media: MediaObject & { expiresAt: Date },
  quota: { limitBytes: number; sources: readonly MediaSource[] },
): Promise<number | undefined> {
  await lockAccount(trx, dialect, media.accountId);
  const heldBytes = await mediaBytesHeld(trx, media.accountId, media.createdAt, quota.sources);
  const same = await trx
    .selectFrom('media')
    .select((eb) => eb.fn.max('size').as('size'))
    .where('account_id', '=', media.accountId)
    .where('sha256', '=', media.sha256)
    .where('removed_at', 'is', null)
    .where('expires_at', '>', media.createdAt.getTime())
    .where('source', 'in', quota.sources)
    .executeTakeFirst();
  const addedBytes = Math.max(0, media.size - Number(same?.size ?? 0));
  if (addedBytes > 0 && heldBytes + addedBytes > quota.limitBytes) return heldBytes;
  await insertMedia(trx, media);
  return undefined;
}

/** The account's media object whose bytes are still kept; another account's id finds nothing. */
export async function findLiveMedia(db: Executor, accountId: string, id: string, now: Date): Promise<MediaObject | undefined> {
  const row = await db
    .selectFrom('media')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('removed_at', 'is', null)
    .where('expires_at', '>', now.getTime())
    .executeTakeFirst();
  return row === undefined ? undefined : toMedia(row);
}

/** A media object by id alone, for a signed link (which is its own authorization); never for a keyed request. */
export async function findLiveMediaById(db: Executor, id: string, now: Date): Promise<MediaObject | undefined> {
  const row = await db
    .selectFrom('media')
    .selectAll()
    .where('id', '=', id)
    .where('removed_at', 'is', null)
    .where('expires_at', '>', now.getTime())
    .executeTakeFirst();
  return row === undefined ? undefined : toMedia(row);
}

/** Keeps a media object at least until `until`: an upload a message now uses lives as long as the message's media. */
export async function extendMediaRetention(db: Executor, id: string, until: Date): Promise<void> {
  await db
    .updateTable('media')
    .set({ expires_at: until.getTime() })
    .where('id', '=', id)
    .where('expires_at', '<', until.getTime())
    .execute();
}

/** Media whose retention has ended and whose bytes are not yet removed, oldest first. */
export async function listExpiredMedia(
  db: Executor,
  now: Date,
  limit: number,
): Promise<{ id: string; accountId: string; sha256: string }[]> {
  const rows = await db
    .selectFrom('media')
    .select(['id', 'account_id', 'sha256'])
    .where('removed_at', 'is', null)
    .where('expires_at', '<=', now.getTime())
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, accountId: row.account_id, sha256: row.sha256 }));
}

export async function markMediaRemoved(db: Executor, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('media').set({ removed_at: at.getTime() }).where('id', 'in', ids).where('removed_at', 'is', null).execute();
}

/** Whether any media object whose bytes are still kept uses this blob. */
export async function blobInUse(db: Executor, accountId: string, sha256: string): Promise<boolean> {
  const row = await db
    .selectFrom('media')
    .select('id')
    .where('account_id', '=', accountId)
    .where('sha256', '=', sha256)
    .where('removed_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The account's media objects by id, kept or not: what a page of messages carries. */
export async function findAccountMedia(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<(MediaObject & { removed: boolean })[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('media').selectAll().where('account_id', '=', accountId).where('id', 'in', ids).execute();
  return rows.map((row) => ({ ...toMedia(row), removed: row.removed_at !== null || Number(row.expires_at) <= Date.now() }));
}

/**
 * Bytes of media the account holds: each distinct unexpired blob once, since equal files are
 * stored once per account. Files it received are left out, as `sources` says.
 */
export async function mediaBytesHeld(db: Executor, accountId: string, now: Date, sources: readonly MediaSource[]): Promise<number> {
  const row = await db
    .selectFrom((inner) =>
      inner
        .selectFrom('media')
        .select((eb) => ['sha256', eb.fn.max('size').as('size')])
        .where('account_id', '=', accountId)
        .where('removed_at', 'is', null)
        .where('expires_at', '>', now.getTime())
        .where('source', 'in', sources)
        .groupBy('sha256')
        .as('blobs'),
    )
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('size'), eb.lit(0)).as('bytes'))
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}
