import type { Logger } from 'pino';
import type { SignInService } from '../accounts/sign-in-service.ts';
import type { IdempotentSendService } from '../messaging/idempotent-send.ts';
import type { SendMessageService } from '../messaging/send-message.ts';

/**
 * The node's periodic clean-up, run at start and then every WAGW_INTERRUPTED_SEND_AFTER_MS:
 * sends a crash cut off are failed (their age is the same setting, so that a send still in flight
 * on another node is left alone), and expired idempotency keys and sign-in counters go.
 */
export async function sweepExpired(
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
  if (interrupted > 0) logger.warn({ count: interrupted }, 'failed sends that a crash cut off before the engine answered');
  // Idempotency keys past their 24 hours go in the same sweep; until then they are only ignored.
  await idempotentSender.purgeExpired().catch((error: unknown) => logger.error({ err: error }, 'could not purge expired idempotency keys'));
  // So do sign-in counters whose windows have passed: without this the table only grows.
  await signIn.pruneThrottle().catch((error: unknown) => logger.error({ err: error }, 'could not prune sign-in throttle counters'));
}
