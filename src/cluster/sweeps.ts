import type { Logger } from 'pino';
import type { SignInService } from '../accounts/sign-in-service.ts';
import type { IdempotentSendService } from '../messaging/idempotent-send.ts';
import type { SendMessageService } from '../messaging/send-message.ts';
import type { Scheduler, ScheduledTask } from '../jobs/scheduler.ts';
import type { MediaSweeper } from '../media/media-sweeper.ts';
import type { MediaDownloadRetrier } from '../media/media-download-retrier.ts';

/** Orphaned blobs are found by listing every blob, so they are looked for once an hour only. */
const ORPHAN_SWEEP_INTERVAL_MS = 3_600_000;

export interface SweptParts {
  sender: SendMessageService;
  idempotentSender: IdempotentSendService;
  signIn: SignInService;
  mediaSweeper: MediaSweeper;
  mediaRetrier: MediaDownloadRetrier;
}

/**
 * Registers the node's clean-up tasks, in the order the node runs them at start: the expired
 * rows, expired media, the incoming files due for another download (of the numbers this node
 * serves), and orphaned media.
 */
export function registerSweeps(scheduler: Scheduler, parts: SweptParts, interruptedSendAfterMs: number, logger: Logger): ScheduledTask[] {
  return [
    scheduler.register({
      name: 'expiry-sweep',
      intervalMs: interruptedSendAfterMs,
      scope: 'every-node',
      run: () => sweepExpired(parts.sender, parts.idempotentSender, parts.signIn, interruptedSendAfterMs, logger),
    }),
    scheduler.register({
      name: 'media-expiry',
      intervalMs: interruptedSendAfterMs,
      scope: 'every-node',
      run: () => parts.mediaSweeper.sweepExpired(),
    }),
    scheduler.register({
      name: 'media-download-retries',
      intervalMs: interruptedSendAfterMs,
      scope: 'owner',
      run: () => parts.mediaRetrier.runDue(),
    }),
    scheduler.register({
      name: 'media-orphans',
      intervalMs: ORPHAN_SWEEP_INTERVAL_MS,
      scope: 'every-node',
      run: () => parts.mediaSweeper.sweepOrphans(),
    }),
  ];
}

/**
 * The node's periodic clean-up, run at start and then every WAGW_INTERRUPTED_SEND_AFTER_MS:
 * sends whose outcome was never recorded are settled as unknown (their age is the same setting, so that a send still in flight
 * on another node is left alone), and expired idempotency keys and sign-in counters go.
 */
async function sweepExpired(
  sender: SendMessageService,
  idempotentSender: IdempotentSendService,
  signIn: SignInService,
  interruptedSendAfterMs: number,
  logger: Logger,
): Promise<void> {
  const interrupted = await sender.failInterruptedSends(new Date(Date.now() - interruptedSendAfterMs)).catch((error: unknown) => {
    logger.error({ err: error }, 'could not sweep interrupted sends');
    return 0;
  });
  // What the sweep knows is only that no answer was recorded: whether the engine took them, and
  // whether a crash, a lost lease or a dead database stood between, it cannot tell.
  if (interrupted > 0)
    logger.warn(
      { count: interrupted },
      'settled as unknown sends whose engine answer was never recorded (their node stopped, or could not write, in between)',
    );
  // Idempotency keys past their 24 hours go in the same sweep; until then they are only ignored.
  await idempotentSender.purgeExpired().catch((error: unknown) => logger.error({ err: error }, 'could not purge expired idempotency keys'));
  // So do sign-in counters whose windows have passed: without this the table only grows.
  await signIn.pruneThrottle().catch((error: unknown) => logger.error({ err: error }, 'could not prune sign-in throttle counters'));
}
