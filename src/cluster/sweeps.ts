import type { Logger } from 'pino';
import type { SignInService } from '../accounts/sign-in-service.ts';
import type { IdempotentSendService } from '../messaging/idempotent-send.ts';
import type { SendMessageService } from '../messaging/send-message.ts';
import type { MediaDownloadRetrier } from '../media/media-download-retrier.ts';
import type { MediaSweeper } from '../media/media-sweeper.ts';

/** Orphaned media needs every blob listed, so it is looked for at most this often. */
const ORPHAN_SWEEP_INTERVAL_MS = 3_600_000;

export interface SweptParts {
  sender: Pick<SendMessageService, 'failInterruptedSends'>;
  idempotentSender: Pick<IdempotentSendService, 'purgeExpired'>;
  signIn: Pick<SignInService, 'pruneThrottle'>;
  mediaSweeper: Pick<MediaSweeper, 'sweepExpired' | 'sweepOrphans'>;
  mediaRetrier: Pick<MediaDownloadRetrier, 'runDue'>;
  /** The age at which a send still `queued` counts as cut off by a crash. */
  interruptedSendAfterMs: number;
  logger: Logger;
}

/**
 * The node's periodic clean-up, run at start and then every WAGW_INTERRUPTED_SEND_AFTER_MS:
 * sends a crash cut off are failed (their age is the same setting, so that a send still in flight
 * on another node is left alone), expired idempotency keys, sign-in counters and media go, and
 * incoming files whose download failed are tried again. Each step's failure is logged and does
 * not stop the others.
 */
export class PeriodicSweeps {
  private lastOrphanSweepAt = 0;

  constructor(private readonly parts: SweptParts) {}

  async run(now = Date.now()): Promise<void> {
    const { sender, idempotentSender, signIn, mediaSweeper, mediaRetrier, interruptedSendAfterMs } = this.parts;
    const interrupted = await this.attempt('could not sweep interrupted sends', () => sender.failInterruptedSends(new Date(now - interruptedSendAfterMs)));
    if (interrupted !== undefined && interrupted > 0) this.parts.logger.warn({ count: interrupted }, 'failed sends that a crash cut off before the engine answered');
    // Idempotency keys past their 24 hours go in the same sweep; until then they are only ignored.
    await this.attempt('could not purge expired idempotency keys', () => idempotentSender.purgeExpired());
    // So do sign-in counters whose windows have passed: without this the table only grows.
    await this.attempt('could not prune sign-in throttle counters', () => signIn.pruneThrottle());
    await this.attempt('could not sweep expired media', () => mediaSweeper.sweepExpired());
    await this.attempt('could not retry incoming files', () => mediaRetrier.runDue());
    if (now - this.lastOrphanSweepAt >= ORPHAN_SWEEP_INTERVAL_MS) {
      this.lastOrphanSweepAt = now;
      await this.attempt('could not sweep orphaned media', () => mediaSweeper.sweepOrphans());
    }
  }

  private async attempt<T>(failure: string, step: () => Promise<T>): Promise<T | undefined> {
    try {
      return await step();
    } catch (error) {
      this.parts.logger.error({ err: error }, failure);
      return undefined;
    }
  }
}
