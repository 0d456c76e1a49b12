import path from 'node:path';
import type { Config } from '../config.ts';
import { DiskFloor } from '../media/disk-floor.ts';
import { MediaAdmission } from '../media/media-admission.ts';
import { MediaFetcher } from '../media/media-fetcher.ts';
import { LinkPreviewFetcher } from '../media/link-previews.ts';
import { PreviewBudgets } from '../media/preview-budgets.ts';
import { MediaLinks } from '../media/media-links.ts';
import { MediaService } from '../media/media-service.ts';
import { MediaSweeper } from '../media/media-sweeper.ts';
import type { AddressPolicy } from '../webhooks/address-guard.ts';
import type { Logger } from 'pino';
import type { GatewayKeys } from './keys.ts';
import type { StorageParts } from './storage.ts';

export interface MediaParts {
  /** Media files: uploads, the files messages carry, and their bytes in the blob store. */
  media: MediaService;
  /** Media retention, and bytes no row needs. */
  mediaSweeper: MediaSweeper;
  /** Fetches media.url files through the pooled, SSRF-guarded client. */
  mediaFetcher: MediaFetcher;
  /** Signed download links, which need no API key. */
  mediaLinks: MediaLinks;
  /** Link previews fetched for sends, through the media fetcher's address guard. */
  linkPreviews: LinkPreviewFetcher;
}

/** Media storage with its quotas and free-disk floor, URL fetches behind the SSRF guard, and signed links. */
export function buildMedia(
  config: Config,
  storage: StorageParts,
  keys: GatewayKeys,
  addressPolicy: AddressPolicy,
  logger: Logger,
): MediaParts {
  const { store, blobs } = storage;
  const fetcher = new MediaFetcher({
    addressPolicy,
    connectTimeoutMs: config.media.fetchConnectTimeoutMs,
    idleTimeoutMs: config.media.fetchIdleTimeoutMs,
    largestFileBytes: Math.max(...Object.values(config.media.limits)),
    userAgent: `wa-gateway/${config.version}`,
  });
  const diskFloor = new DiskFloor({
    // The media directory, and the database's own disk, which must never be the one to fill.
    directories: [config.media.directory, ...(config.database.dialect === 'sqlite' ? [path.dirname(config.database.path)] : [])],
    minFreeBytes: config.media.minFreeBytes,
    minFreePercent: config.media.minFreePercent,
  });
  const admission = new MediaAdmission(store, config.media.allowances, diskFloor);
  const { previewFetchesPerNumber, windowMs } = config.media.allowances;
  return {
    mediaFetcher: fetcher,
    media: new MediaService(store, blobs, config.media, fetcher, admission),
    mediaSweeper: new MediaSweeper(store, blobs, logger),
    mediaLinks: new MediaLinks(keys.mediaLinksKey, config.publicUrl),
    linkPreviews: new LinkPreviewFetcher(fetcher, new PreviewBudgets(admission, previewFetchesPerNumber, windowMs)),
  };
}
