import type { MediaKind } from '../domain/media.ts';
import type { MediaAddresses, ReceivedMedia } from '../domain/event-payloads.ts';
import { classifyDownloadFailure, withinBudget } from './download-attempt.ts';
import type { MediaLinks } from './media-links.ts';
import type { MediaService } from './media-service.ts';

/**
 * When a failed incoming download is tried again, after the first try that came with the
 * message: five more over about eight and a half hours, by then long enough for a phone that was
 * offline to come back and upload the file again. Then the gateway gives up and says so.
 */
export const DOWNLOAD_RETRY_DELAYS_MS: readonly number[] = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000];

export interface IncomingFile {
  accountId: string;
  kind: MediaKind;
  fileName: string | null;
  start(): Promise<AsyncIterable<Buffer>>;
}

/**
 * Fetches and stores an incoming file within `budgetMs`. A failure is an answer, not an error:
 * the file is then unavailable, with the reason, and `willRetry` says whether another try is due
 * (a transient failure, with tries left and a way to make them).
 */
export async function fetchIncomingFile(
  media: MediaService,
  file: IncomingFile,
  budgetMs: number,
  triesLeft: boolean,
): Promise<ReceivedMedia> {
  try {
    // A disk at its floor takes no file: the download is not even begun, and is tried again later.
    await media.admission.assertDiskRoom();
    const bytes = await withinBudget(() => file.start(), budgetMs);
    return {
      stored: await media.ingest(bytes, {
        accountId: file.accountId,
        source: 'received',
        preferredKind: file.kind,
        fileName: file.fileName,
      }),
    };
  } catch (error) {
    const { reason, transient } = classifyDownloadFailure(error);
    return { kind: file.kind, unavailable: reason, willRetry: transient && triesLeft };
  }
}

/** A file's links for a webhook: the plain one, and a signed one lasting WAGW_MEDIA_LINK_TTL_HOURS from now. */
export function webhookAddresses(links: MediaLinks, linkTtlMs: number, media: ReceivedMedia | undefined): MediaAddresses {
  const plain = (id: string) => links.plain(id);
  if (media === undefined || !('stored' in media)) return { plain };
  return { plain, signed: links.sign(media.stored.id, new Date(Date.now() + linkTtlMs)) };
}
