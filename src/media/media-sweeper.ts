import type { Logger } from 'pino';
import type { Store } from '../store/database.ts';
import { blobInUse, listExpiredMedia, markMediaRemoved } from '../store/repositories/media.ts';
import type { BlobStore } from './blob-store.ts';

/** A blob written this recently is never removed: its row may be an instant from being inserted. */
const GRACE_MS = 60 * 60_000;
const BATCH = 500;

/**
 * Ends media retention and keeps the blob store free of bytes no row needs.
 *
 * - Expired media objects are marked removed, and their blob goes once no kept object uses it.
 * - Orphans (a blob whose row a crash never wrote) go once they are older than the grace
 *   period: an ingest commits its blob and inserts its row milliseconds apart, and committing
 *   the same bytes again marks the blob as just written, so a blob about to be used is never
 *   taken away.
 * - Temporary files of writes a crash cut off go after the same grace.
 */
export class MediaSweeper {
  constructor(
    private readonly store: Store,
    private readonly blobs: BlobStore,
    private readonly logger: Logger,
  ) {}

  /** Retention: run often; each call handles up to a batch of expired objects. */
  async sweepExpired(now = new Date()): Promise<number> {
    const expired = await listExpiredMedia(this.store.db, now, BATCH);
    await markMediaRemoved(
      this.store.db,
      expired.map((media) => media.id),
      now,
    );
    const blobs = new Map(expired.map((media) => [`${media.accountId}/${media.sha256}`, media]));
    for (const media of blobs.values()) await this.removeIfUnused(media, now);
    if (expired.length > 0) this.logger.info({ count: expired.length }, 'media retention ended');
    return expired.length;
  }

  /** Orphans and abandoned writes: run rarely, since it lists every blob. */
  async sweepOrphans(now = new Date()): Promise<number> {
    let removed = 0;
    for await (const blob of this.blobs.list()) {
      if (blob.writtenAt.getTime() > now.getTime() - GRACE_MS) continue;
      if (await this.removeIfUnused(blob, now)) removed += 1;
    }
    removed += await this.blobs.sweepIncoming(new Date(now.getTime() - GRACE_MS));
    if (removed > 0) this.logger.warn({ count: removed }, 'removed media bytes that no row needed (writes a crash cut off)');
    return removed;
  }

  private async removeIfUnused(key: { accountId: string; sha256: string }, now: Date): Promise<boolean> {
    if (await blobInUse(this.store.db, key.accountId, key.sha256)) return false;
    const touched = await this.blobs.touchedAt(key);
    if (touched === undefined || touched.getTime() > now.getTime() - GRACE_MS) return false;
    await this.blobs.remove(key);
    return true;
  }
}
