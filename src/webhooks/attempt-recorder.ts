import type { Logger } from 'pino';
import type { WebhookConfig } from '../config.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { recordAttempts, type AttemptOutcome } from '../store/repositories/deliveries.ts';
import { findWebhookForDelivery, recordWebhookHealth, updateWebhook } from '../store/repositories/webhooks.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const OUTCOME_BATCH_WINDOW_MS = 5;

/**
 * Writes attempt outcomes in batches: every outcome that arrives while a batch is being
 * committed joins the next one. A delivery keeps its claim until its outcome is written, so
 * the worker may free the endpoint's slot as soon as the HTTP answer is in, without the
 * delivery being claimed twice.
 */
export class AttemptRecorder {
  private pending: { outcome: AttemptOutcome; gone: boolean; settle: () => void }[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly config: WebhookConfig,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the outcome is committed. `gone` marks a 410, which disables the webhook. */
  record(outcome: AttemptOutcome, gone: boolean): Promise<void> {
    return new Promise((settle) => {
      this.pending.push({ outcome, gone, settle });
      this.flushing ??= this.flushAll();
    });
  }

  private async flushAll(): Promise<void> {
    // Outcomes are not on anyone's request path, so they wait a few milliseconds for company:
    // one commit for many attempts instead of a commit for every handful.
    await new Promise((resolve) => setTimeout(resolve, OUTCOME_BATCH_WINDOW_MS));
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, 1_000);
      try {
        await this.write(
          batch.map((entry) => entry.outcome),
          batch.filter((entry) => entry.gone).map((entry) => entry.outcome),
        );
      } catch (error) {
        // The deliveries keep their claims and will be attempted again when those lapse.
        this.logger.error({ err: error, count: batch.length }, 'could not record webhook attempts');
      }
      for (const entry of batch) entry.settle();
    }
    this.flushing = undefined;
  }

  private async write(outcomes: AttemptOutcome[], goneOutcomes: AttemptOutcome[]): Promise<void> {
    const at = new Date();
    const succeeded = new Set(outcomes.filter((outcome) => outcome.state === 'delivered').map((outcome) => outcome.attempt.webhookId));
    const failed = new Set(outcomes.filter((outcome) => outcome.state !== 'delivered').map((outcome) => outcome.attempt.webhookId));
    for (const webhookId of succeeded) failed.delete(webhookId);
    await this.committer.run(async (trx) => {
      await recordAttempts(trx, outcomes);
      await recordWebhookHealth(trx, [...succeeded], [...failed], at);
      for (const outcome of goneOutcomes) {
        await updateWebhook(trx, outcome.attempt.webhookId, { enabled: false, disabledReason: 'The endpoint answered 410 Gone.' }, at);
      }
    });
    // Rare (a 410): each disabled webhook's account forgets its cached webhooks, here and on other nodes.
    const goneAccounts = new Set<string>();
    for (const outcome of goneOutcomes) {
      const webhook = await findWebhookForDelivery(this.store.db, outcome.attempt.webhookId);
      if (webhook !== undefined) goneAccounts.add(webhook.accountId);
    }
    for (const accountId of goneAccounts) await this.store.lookups.webhooksChanged(accountId);
    for (const webhookId of failed) await this.disableIfFailingTooLong(webhookId, at);
  }

  /** A webhook that has failed without a single success for days is switched off, with the reason. */
  private async disableIfFailingTooLong(webhookId: string, at: Date): Promise<void> {
    const webhook = await findWebhookForDelivery(this.store.db, webhookId);
    const limitMs = this.config.disableAfterFailingDays * DAY_MS;
    if (webhook?.enabled && webhook.failingSince !== null && at.getTime() - webhook.failingSince.getTime() >= limitMs) {
      const reason = `Every attempt has failed since ${webhook.failingSince.toISOString()} (${this.config.disableAfterFailingDays} days).`;
      await updateWebhook(this.store.db, webhookId, { enabled: false, disabledReason: reason }, at);
      await this.store.lookups.webhooksChanged(webhook.accountId);
      this.logger.warn({ webhookId, reason }, 'disabled a failing webhook');
    }
  }
}
