import type { Logger } from 'pino';
import type { WhatsAppNumber } from '../domain/model.ts';
import { messageMediaPayload, type ReceivedMedia } from '../domain/event-payloads.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import {
  attachReceivedMedia,
  claimDownload,
  deletePendingDownload,
  listDueDownloads,
  rescheduleDownload,
  type PendingDownload,
} from '../store/repositories/media-downloads.ts';
import { findMessageById } from '../store/repositories/messages.ts';
import { enqueueEvent, NOTHING_QUEUED, type DeliveryNotifier } from '../webhooks/outbox.ts';
import type { MediaLinks } from './media-links.ts';
import type { MediaService } from './media-service.ts';
import { DOWNLOAD_RETRY_DELAYS_MS, fetchIncomingFile, webhookAddresses } from './received-media.ts';

/** A retry may take this long, a large file over a slow link included, before it counts as failed. */
const RETRY_BUDGET_MS = 10 * 60_000;
/** A claimed retry is due again this long after its claim, should the node die during it. */
const CLAIM_MS = RETRY_BUDGET_MS + 60_000;
const BATCH = 20;

/** The sessions the retries go through: only the node that runs a number's session fetches its files. */
export interface DownloadSessions {
  servedNumbers(): WhatsAppNumber[];
  downloadAgain(number: WhatsAppNumber, retryToken: string): Promise<AsyncIterable<Buffer>>;
}

/**
 * Tries failed incoming downloads again (docs/media.md, "When a download fails"). Each row of
 * `media_downloads` is a promise made in the message's own transaction; it is kept by one of
 * two ends, each committed with the `message.media` event that reports it: the file stored and
 * attached to its message, or the retries given up.
 */
export class MediaDownloadRetrier {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly media: MediaService,
    private readonly links: MediaLinks,
    private readonly sessions: DownloadSessions,
    private readonly logger: Logger,
  ) {}

  /** Runs the retries due by `now` for numbers served here; answers how many were tried. */
  async runDue(now = new Date()): Promise<number> {
    const numbers = new Map(this.sessions.servedNumbers().map((number) => [number.id, number]));
    const due = await listDueDownloads(this.store.db, [...numbers.keys()], now, BATCH);
    let tried = 0;
    for (const pending of due) {
      const number = numbers.get(pending.numberId);
      if (number === undefined || !(await claimDownload(this.store.db, pending, new Date(now.getTime() + CLAIM_MS)))) continue;
      tried += 1;
      await this.retry(number, pending, now).catch((error: unknown) =>
        this.logger.error({ err: error, messageId: pending.messageId }, 'could not retry an incoming file'),
      );
    }
    return tried;
  }

  private async retry(number: WhatsAppNumber, pending: PendingDownload, now: Date): Promise<void> {
    const attempts = pending.attempts + 1;
    const triesLeft = attempts <= DOWNLOAD_RETRY_DELAYS_MS.length;
    const media = await fetchIncomingFile(
      this.media,
      {
        accountId: pending.accountId,
        kind: pending.kind,
        fileName: pending.fileName,
        start: () => this.sessions.downloadAgain(number, pending.engineToken),
      },
      RETRY_BUDGET_MS,
      triesLeft,
    );
    if ('unavailable' in media && media.willRetry) {
      const next = new Date(now.getTime() + DOWNLOAD_RETRY_DELAYS_MS[attempts - 1]!);
      await rescheduleDownload(this.store.db, pending.messageId, attempts, media.unavailable, next);
      this.logger.info(
        { messageId: pending.messageId, attempts, reason: media.unavailable, next },
        'an incoming file is still unavailable; trying again later',
      );
      return;
    }
    await this.settle(pending, media);
  }

  /** Ends the retries with their outcome, reported in the same commit; once only, whichever node gets there first. */
  private async settle(pending: PendingDownload, media: ReceivedMedia): Promise<void> {
    const queued = await this.committer.run(async (trx) => {
      if (!(await deletePendingDownload(trx, pending.messageId))) return NOTHING_QUEUED;
      const message = await findMessageById(trx, pending.messageId);
      if (message === undefined) return NOTHING_QUEUED;
      if ('stored' in media) await attachReceivedMedia(trx, message.id, media.stored.id);
      return enqueueEvent(
        trx,
        this.notifier,
        message.accountId,
        messageMediaPayload(message, media, webhookAddresses(this.links, this.media.linkTtlMs, media)),
        new Date(),
      );
    });
    this.notifier.deliveriesQueued(queued);
    if ('unavailable' in media)
      this.logger.warn({ messageId: pending.messageId, reason: media.unavailable }, 'gave up on an incoming file');
  }
}
