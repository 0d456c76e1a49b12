import type { Logger } from 'pino';
import type { WebhookConfig } from '../config.ts';
import { newId } from '../domain/ids.ts';
import type { DeliveryState, EventPayload, WebhookAttempt } from '../domain/webhooks.ts';
import { renderPayload } from '../domain/webhooks.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Executor, Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { claimDueDeliveries, releaseClaims, type ClaimedDelivery } from '../store/repositories/delivery-claims.ts';
import { pruneDeliveryHistory } from '../store/repositories/deliveries.ts';
import { AttemptRecorder } from './attempt-recorder.ts';
import { EndpointSlots, type SlotOutcome } from './endpoint-slots.ts';
import { TokenBuckets } from '../domain/token-buckets.ts';
import type { DeliveryNotifier } from './outbox.ts';
import { applyRetryAfter, retryDelayMs } from './retry-policy.ts';
import { signatureHeaders } from './signing.ts';
import type { AttemptResult, WebhookHttpClient } from './webhook-http.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** How long a freed slot waits for its neighbours before they are refilled by one claim. */
const SLOT_REFILL_DELAY_MS = 1;
/** How long a claim outlives the request timeout before another worker may take the delivery. */
const LEASE_MARGIN_MS = 5_000;
/**
 * After this long unanswered (or half the timeout, if that is shorter) a request stops counting
 * against the overall in-flight limit. Healthy endpoints answer well within it.
 */
const SLOW_REQUEST_MS = 1_000;

export interface DeliveryWorkerOptions {
  store: Store;
  committer: GroupCommitter;
  client: WebhookHttpClient;
  secretBox: SecretBox;
  config: WebhookConfig;
  logger: Logger;
  /** Told of every attempt: the delivery's state after it, and how long the request took. */
  onAttempt?: (state: DeliveryState, durationSeconds: number) => void;
}

/**
 * Sends queued deliveries. It claims due work in batches, keeps many requests in flight, and
 * bounds them per endpoint as well as overall (EndpointSlots), so a hanging endpoint only ever
 * holds its own slots: the claim skips webhooks already at their limit, and other endpoints'
 * work flows past. All state lives in the database; the worker holds nothing that a crash
 * could lose.
 */
export class DeliveryWorker implements DeliveryNotifier {
  private readonly slots: EndpointSlots;
  private running = false;
  private claiming = false;
  private wakeRequested = false;
  private wakeDueAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastPruneAt = 0;
  private currentClaim: Promise<void> | undefined;
  private readonly settled = new Set<Promise<void>>();
  private readonly recorder: AttemptRecorder;
  /** Opened secrets by their sealed form: exact, so a rotation is seen on the next claim. */
  private readonly openedSecrets = new Map<string, string>();
  /** Requests a second per destination host, whatever webhooks of whatever accounts point at it. */
  private readonly hostLimits: TokenBuckets;
  /** Webhooks whose host is over its rate, with when it has room again: not claimed till then. */
  private readonly heldWebhooks = new Map<string, number>();

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.recorder = new AttemptRecorder(options.store, options.committer, options.config, options.logger);
    const perHost = options.config.maxPerHostPerSecond;
    this.hostLimits = new TokenBuckets({ ratePerSecond: perHost, burst: perHost });
    const { maxInFlight, maxInFlightPerEndpoint, timeoutMs } = options.config;
    this.slots = new EndpointSlots(
      { maxInFlight, maxInFlightPerEndpoint, slowAfterMs: Math.min(SLOW_REQUEST_MS, timeoutMs / 2) },
      () => this.wake(SLOT_REFILL_DELAY_MS),
    );
  }

  start(): void {
    this.running = true;
    this.deliveriesQueued();
  }

  /**
   * Stops claiming, cuts the requests in flight short (they are recorded as failed and retried
   * after the restart, so a hanging endpoint cannot hold up a shutdown), and waits until every
   * outcome is written.
   */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.wakeDueAt = undefined;
    await this.currentClaim;
    this.options.client.close();
    await Promise.allSettled([...this.settled]);
  }

  deliveriesQueued(): void {
    this.wake(0);
  }

  /**
   * Claims again after `delayMs`. A freed slot waits a moment so that the slots freed around
   * it are filled by the same claim, instead of one claim per answer.
   */
  private wake(delayMs: number): void {
    if (!this.running) return;
    if (this.claiming) {
      this.wakeRequested = true;
      return;
    }
    const dueAt = Date.now() + delayMs;
    // An earlier wake already scheduled serves this one too.
    if (this.wakeDueAt !== undefined && this.wakeDueAt <= dueAt) return;
    clearTimeout(this.timer);
    this.wakeDueAt = dueAt;
    this.timer = setTimeout(() => {
      this.wakeDueAt = undefined;
      void this.claimAndDispatch();
    }, delayMs);
  }

  private claimAndDispatch(): Promise<void> {
    // A claim already running keeps its promise, which stop() waits for.
    if (this.claiming && this.currentClaim) {
      this.wakeRequested = true;
      return this.currentClaim;
    }
    this.currentClaim = this.claimOnce().finally(() => {
      this.currentClaim = undefined;
    });
    return this.currentClaim;
  }

  private async claimOnce(): Promise<void> {
    if (!this.running || this.claiming) return;
    this.claiming = true;
    this.wakeRequested = false;
    let claimedFullBatch = false;
    try {
      await this.pruneIfDue();
      const room = this.slots.room();
      if (room > 0) {
        const claimed = await this.claim(room);
        claimedFullBatch = claimed.length === room;
        const accepted = await this.withinEndpointLimits(claimed);
        // Claimed just as a stop began: handed back untouched rather than started.
        if (this.running) for (const delivery of accepted) this.track(delivery);
        else await releaseClaims(this.options.store.db, accepted.map((delivery) => delivery.id));
      }
    } catch (error) {
      this.options.logger.error({ err: error }, 'the webhook worker could not claim deliveries');
    } finally {
      this.claiming = false;
    }
    if (!this.running) return;
    const again = this.wakeRequested || claimedFullBatch;
    this.wake(again ? SLOT_REFILL_DELAY_MS : this.options.config.pollIntervalMs);
  }

  private claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = Date.now();
    const work = (trx: Executor) =>
      claimDueDeliveries(trx, {
        now,
        leaseUntil: now + this.options.config.timeoutMs + LEASE_MARGIN_MS,
        limit,
        perWebhookLimit: this.options.config.maxInFlightPerEndpoint,
        freeSlotsByWebhook: this.freeSlotsByWebhook(now),
      });
    // A lease lost to a power cut only lapses early, so a claim need not be durable on its own.
    // PostgreSQL skips its fsync. On SQLite every commit is durable (and blocks the event loop),
    // so the claim joins the group commit of the outcomes being written instead of paying for a
    // commit of its own: half the commits of a drain.
    return this.options.store.dialect === 'postgres' ? this.options.store.transactionWithoutSync(work) : this.options.committer.run(work);
  }

  /** The endpoints' free slots, with webhooks held back for their host's rate at none. */
  private freeSlotsByWebhook(now: number): Map<string, number> {
    const free = this.slots.freeSlotsByWebhook();
    for (const [webhookId, readyAt] of this.heldWebhooks) {
      if (readyAt <= now) this.heldWebhooks.delete(webhookId);
      else free.set(webhookId, 0);
    }
    return free;
  }

  /**
   * Keeps what fits under each endpoint's limit and its host's rate, and hands the rest back at
   * once: a delivery over its host's rate stays due in the outbox, and its webhook is not claimed
   * again until the host has room, so the wait costs neither claims nor other hosts' turns.
   */
  private async withinEndpointLimits(claimed: ClaimedDelivery[]): Promise<ClaimedDelivery[]> {
    const { accepted: fitting, rejected } = this.slots.fit(claimed);
    const accepted: ClaimedDelivery[] = [];
    const now = Date.now();
    for (const delivery of fitting) {
      const host = hostOf(delivery.url);
      if (this.hostLimits.tryTake(host, now)) {
        accepted.push(delivery);
        continue;
      }
      rejected.push(delivery);
      const readyAt = this.hostLimits.nextTokenAt(host, now);
      this.heldWebhooks.set(delivery.webhookId, readyAt);
      this.wake(readyAt - now);
    }
    await releaseClaims(this.options.store.db, rejected.map((delivery) => delivery.id));
    return accepted;
  }

  /**
   * Runs one attempt. The endpoint's slot is freed when the HTTP answer is in; writing the
   * outcome continues in the background (batched), while the delivery's lease keeps it from
   * being claimed again.
   */
  private track(delivery: ClaimedDelivery): void {
    const { webhookId } = delivery;
    const freeSlot = this.slots.take(webhookId);
    const settled = this.attempt(delivery, freeSlot)
      .catch((error: unknown) => {
        this.options.logger.error({ err: error, webhookId }, 'a webhook attempt failed unexpectedly');
      })
      .finally(() => this.settled.delete(settled));
    this.settled.add(settled);
  }

  private async attempt(delivery: ClaimedDelivery, freeSlot: (outcome: SlotOutcome) => void): Promise<void> {
    const attemptedAt = new Date();
    let result: AttemptResult | undefined;
    try {
      const body = renderPayload(JSON.parse(delivery.payload) as EventPayload, delivery.webhookId);
      // webhook-id is the delivery id, the same on every retry, so receivers can deduplicate.
      const headers = signatureHeaders(delivery.id, attemptedAt, body, this.signingSecrets(delivery, attemptedAt));
      result = await this.options.client.post(delivery.url, body, { ...headers });
    } catch (error) {
      // Something on our side (a secret sealed under another key, say) stopped the request.
      // It is recorded like any failure, so the schedule and the disabling rules still apply.
      result = {
        statusCode: null,
        responseExcerpt: null,
        error: 'internal',
        errorDetail: error instanceof Error ? error.message : String(error),
        durationMs: 0,
        retryAfterMs: null,
      };
    } finally {
      freeSlot(slotOutcomeOf(result));
    }
    await this.record(delivery, attemptedAt, result);
  }

  private signingSecrets(delivery: ClaimedDelivery, at: Date): string[] {
    const secrets = [this.open(delivery.sealedSecret)];
    if (delivery.sealedPreviousSecret !== null && (delivery.previousSecretExpiresAt ?? 0) > at.getTime()) {
      secrets.push(this.open(delivery.sealedPreviousSecret));
    }
    return secrets;
  }

  private open(sealed: string): string {
    let secret = this.openedSecrets.get(sealed);
    if (secret === undefined) {
      if (this.openedSecrets.size > 10_000) this.openedSecrets.clear();
      secret = this.options.secretBox.open(sealed);
      this.openedSecrets.set(sealed, secret);
    }
    return secret;
  }

  private async record(delivery: ClaimedDelivery, attemptedAt: Date, result: AttemptResult): Promise<void> {
    const succeeded = result.error === null && result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const scheduled = succeeded || gone ? null : retryDelayMs(delivery.attemptCount + 1, this.options.config.retryDelaysSeconds);
    const delayMs = scheduled === null ? null : applyRetryAfter(scheduled, result.retryAfterMs);
    const attempt: WebhookAttempt = {
      id: newId('attempt'),
      deliveryId: delivery.id,
      webhookId: delivery.webhookId,
      attemptedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      responseExcerpt: result.responseExcerpt,
      error: result.error === null ? null : `${result.error}${result.errorDetail ? `: ${result.errorDetail}` : ''}`,
    };
    const state = succeeded ? 'delivered' : delayMs === null ? 'failed' : 'pending';
    this.options.onAttempt?.(state, result.durationMs / 1000);
    const nextAttemptAt = delayMs === null ? null : new Date(attemptedAt.getTime() + delayMs);
    await this.recorder.record({ attempt, state, nextAttemptAt, leaseUntil: delivery.leaseUntil }, gone);
  }

  private async pruneIfDue(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPruneAt < PRUNE_INTERVAL_MS) return;
    this.lastPruneAt = now;
    await pruneDeliveryHistory(this.options.store.db, new Date(now - this.options.config.attemptRetentionDays * DAY_MS));
  }
}

/** The host and port a delivery's URL names, which its rate is counted by. */
function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url;
  }
}

/** Any HTTP answer, even an error status, shows the endpoint responsive; a timeout, that it is not. */
function slotOutcomeOf(result: AttemptResult | undefined): SlotOutcome {
  if (result?.error === 'timeout') return 'timed_out';
  return result?.statusCode != null ? 'answered' : 'failed';
}
