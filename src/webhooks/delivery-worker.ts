import type { Logger } from 'pino';
import type { WebhookConfig } from '../config.ts';
import { newId } from '../domain/ids.ts';
import type { DeliveryState, EventPayload, WebhookAttempt } from '../domain/webhooks.ts';
import { renderPayload, renderRoutingKey } from '../domain/webhooks.ts';
import type { AmqpPublisher } from './amqp-publisher.ts';
import type { ChatwootRelay } from './chatwoot-relay.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { CachedLookups } from '../store/cached-lookups.ts';
import type { Executor, Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { claimDueDeliveries, releaseClaims, type Claim, type ClaimedDelivery } from '../store/repositories/delivery-claims.ts';
import { pruneDeliveryHistory } from '../store/repositories/deliveries.ts';
import { AttemptRecorder } from './attempt-recorder.ts';
import { EndpointSlots, type SlotOutcome } from './endpoint-slots.ts';
import { TokenBuckets } from '../domain/token-buckets.ts';
import { HandoffQueues } from './handoff-queues.ts';
import type { DeliveryNotifier, Enqueued } from './outbox.ts';
import { applyRetryAfter, retryDelayMs } from './retry-policy.ts';
import { SealedSecrets, signatureHeaders } from './signing.ts';
import type { AttemptResult, WebhookHttpClient } from './webhook-http.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** How long a freed slot waits for its neighbours before they are refilled by one claim. */
const SLOT_REFILL_DELAY_MS = 1;
/** How long a claim outlives the request timeout before another worker may take the delivery. */
const CLAIM_MARGIN_MS = 5_000;
/**
 * After this long unanswered (or half the timeout, if that is shorter) a request stops counting
 * against the overall in-flight limit. Healthy endpoints answer well within it.
 */
const SLOW_REQUEST_MS = 1_000;
/**
 * Handed-over deliveries waiting per endpoint, in multiples of its in-flight limit, and overall,
 * in multiples of the overall limit. A healthy endpoint works through its share in a few
 * round trips; more would only age in memory while the claim runs down.
 */
const HANDOFF_DEPTH_PER_ENDPOINT = 8;
const HANDOFF_DEPTH_OVERALL = 4;

export interface DeliveryWorkerOptions {
  store: Store;
  committer: GroupCommitter;
  client: WebhookHttpClient;
  /** Publishes to RabbitMQ sinks (webhooks whose URL is amqp:// or amqps://). */
  amqp: AmqpPublisher;
  /** Posts to Chatwoot inboxes (webhooks with a `chatwoot` destination, ADR 0067). */
  chatwoot: ChatwootRelay;
  secretBox: SecretBox;
  config: WebhookConfig;
  logger: Logger;
  /**
   * Told of every attempt: the delivery's state after it, how long the request took, and how long
   * after its event was committed it ended.
   */
  onAttempt?: (state: DeliveryState, durationSeconds: number, lagSeconds: number) => void;
  /** Told of every attempt started, with how the delivery reached the worker. */
  onStarted?: (source: DeliverySource) => void;
  /** Told when deliveries were written on this node, some of which may be for its event streams. */
  onQueued?: () => void;
}

/** Handed over by the write that queued the delivery, or claimed from the outbox. */
export type DeliverySource = 'handoff' | 'claim';

type QueuedDelivery = ClaimedDelivery & { event?: EventPayload; source: DeliverySource };

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
  private readonly secrets: SealedSecrets;
  /** Requests a second per destination host, whatever webhooks of whatever accounts point at it. */
  private readonly hostLimits: TokenBuckets;
  /** Webhooks whose host is over its rate, with when it has room again: not claimed till then. */
  private readonly heldWebhooks = new Map<string, number>();
  /**
   * Deliveries this node holds claims on, waiting for a slot of their endpoint: handed over by
   * the write that queued them (no claim round trip), or claimed ahead of the free slots so that
   * a freed slot starts the next one at once instead of waiting for a claim.
   */
  private readonly queued: HandoffQueues<QueuedDelivery>;
  /** Webhooks the last claim left due work behind for: their new work queues behind it. */
  private backlogged = new Set<string>();
  /** Whether the outbox may hold due work this node has not claimed: a freed slot then claims. */
  private claimableWork = true;

  /** Events written with this worker as their notifier read the account's webhooks through this cache. */
  get lookups(): CachedLookups {
    return this.options.store.lookups;
  }

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.secrets = new SealedSecrets(options.secretBox);
    this.recorder = new AttemptRecorder(options.store, options.committer, options.config, options.logger);
    const perHost = options.config.maxPerHostPerSecond;
    this.hostLimits = new TokenBuckets({ ratePerSecond: perHost, burst: perHost });
    const { maxInFlight, maxInFlightPerEndpoint, timeoutMs } = options.config;
    this.slots = new EndpointSlots(
      { maxInFlight, maxInFlightPerEndpoint, slowAfterMs: Math.min(SLOW_REQUEST_MS, timeoutMs / 2) },
      (webhookId) => this.slotFreed(webhookId),
    );
    this.queued = new HandoffQueues(maxInFlightPerEndpoint * HANDOFF_DEPTH_PER_ENDPOINT, maxInFlight * HANDOFF_DEPTH_OVERALL);
  }

  start(): void {
    this.running = true;
    this.claimableWork = true;
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
    // Handed over but not started: given back, so the next start (here or elsewhere) claims them at once.
    await this.handBack(this.queued.clear());
    this.options.client.close();
    this.options.amqp.close();
    this.options.chatwoot.close();
    await Promise.allSettled([...this.settled]);
  }

  /**
   * A claim for a delivery about to be written, if this node will send it from memory: only
   * while running, for an endpoint that is answering, within its host's rate, with no older
   * work waiting in the outbox, and with room in its queue here.
   */
  claimForNew(webhookId: string, now: number): number | null {
    if (!this.running || this.backlogged.has(webhookId) || !this.slots.isAnswering(webhookId)) return null;
    if ((this.heldWebhooks.get(webhookId) ?? 0) > now || !this.queued.hasRoom(webhookId)) return null;
    return now + this.options.config.timeoutMs + CLAIM_MARGIN_MS;
  }

  deliveriesQueued(enqueued?: Enqueued): void {
    if (enqueued !== undefined && enqueued.count === 0) return;
    this.options.onQueued?.();
    const handedOver = enqueued?.handedOver ?? [];
    if (handedOver.length > 0) {
      if (!this.running) void this.handBack(handedOver);
      else {
        for (const delivery of handedOver) this.queued.push({ ...delivery, source: 'handoff' });
        for (const webhookId of new Set(handedOver.map((delivery) => delivery.webhookId))) this.startQueued(webhookId);
      }
    }
    if (enqueued === undefined || enqueued.count > handedOver.length) {
      this.claimableWork = true;
      this.wake(0);
    }
  }

  private slotFreed(webhookId: string | undefined): void {
    if (webhookId !== undefined) this.startQueued(webhookId);
    // Overall room freed as well: endpoints whose queues waited for it go next. (Checked first:
    // this runs on every answer, and the overall limit is usually not what held them.)
    if (this.slots.room() > 0 && this.queued.size > 0) {
      for (const waiting of this.queued.waitingWebhooks()) {
        if (this.slots.room() <= 0) break;
        this.startQueued(waiting);
      }
    }
    if (this.claimableWork) this.wake(SLOT_REFILL_DELAY_MS);
  }

  /**
   * Starts the endpoint's queued deliveries while it has free slots. One whose claim no longer
   * covers a whole request, or whose host is over its rate, goes back to the outbox, and so does
   * everything queued behind it: the queue is oldest first, and a later claim's fresher work
   * would otherwise overtake it (the next claim takes them all again, oldest first). On a slow
   * endpoint, or a busy machine, work claimed ahead can wait out its claim while work claimed
   * since waits behind it.
   */
  private startQueued(webhookId: string): void {
    const expired: QueuedDelivery[] = [];
    while (this.running && this.slots.room() > 0 && this.slots.freeFor(webhookId) > 0) {
      const delivery = this.queued.shift(webhookId);
      if (delivery === undefined) break;
      const now = Date.now();
      if (delivery.claimedUntil - now < this.options.config.timeoutMs) {
        expired.push(delivery, ...this.queued.takeAll(webhookId));
        break;
      }
      const host = hostOf(delivery.url);
      if (!this.hostLimits.tryTake(host, now)) {
        expired.push(delivery, ...this.queued.takeAll(webhookId));
        this.holdForHost(webhookId, host, now);
        break;
      }
      this.track(delivery);
    }
    if (expired.length > 0) void this.handBack(expired);
  }

  /** Releases claims taken for sending from memory, so any node's claim takes the deliveries. */
  private async handBack(deliveries: ClaimedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    try {
      await releaseClaims(this.options.store.db, deliveries);
    } catch (error) {
      // The claims lapse by themselves; the deliveries are claimed then.
      this.options.logger.warn({ err: error, count: deliveries.length }, 'could not hand deliveries back to the outbox');
    }
    this.claimableWork = true;
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
      const room = this.slots.room() + this.queued.room();
      if (room > 0) {
        const { deliveries, webhooksWithMore } = await this.claim(room);
        claimedFullBatch = deliveries.length === room;
        this.backlogged = new Set(webhooksWithMore);
        this.claimableWork = claimedFullBatch || webhooksWithMore.length > 0;
        // Claimed just as a stop began: handed back untouched rather than started.
        if (!this.running) await releaseClaims(this.options.store.db, deliveries);
        else {
          for (const delivery of deliveries) this.queued.push({ ...delivery, source: 'claim' });
          for (const webhookId of new Set(deliveries.map((delivery) => delivery.webhookId))) this.startQueued(webhookId);
        }
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

  private claim(limit: number): Promise<Claim> {
    const now = Date.now();
    const work = (trx: Executor) =>
      claimDueDeliveries(trx, {
        now,
        claimedUntil: now + this.options.config.timeoutMs + CLAIM_MARGIN_MS,
        limit,
        perWebhookLimit: this.options.config.maxInFlightPerEndpoint + this.queued.perWebhook,
        freeSlotsByWebhook: this.roomByWebhook(now),
      });
    // A claim lost to a power cut only lapses early, so it need not be durable on its own.
    // PostgreSQL skips its fsync. On SQLite every commit is durable (and blocks the event loop),
    // so the claim joins the group commit of the outcomes being written instead of paying for a
    // commit of its own: half the commits of a drain.
    return this.options.store.dialect === 'postgres' ? this.options.store.transactionWithoutSync(work) : this.options.committer.run(work);
  }

  /** The endpoints' free slots, with webhooks held back for their host's rate at none. */
  /**
   * What each endpoint not at its full share may take in a claim: its free slots, plus room in
   * its queue while it answers (a hanging endpoint's work is not claimed ahead, where its claims
   * would only run down); one held back for its host's rate takes nothing.
   */
  private roomByWebhook(now: number): Map<string, number> {
    const room = new Map<string, number>();
    for (const webhookId of new Set([...this.slots.freeSlotsByWebhook().keys(), ...this.queued.waitingWebhooks()])) {
      room.set(webhookId, this.slots.freeFor(webhookId) + (this.slots.isAnswering(webhookId) ? this.queued.roomFor(webhookId) : 0));
    }
    for (const [webhookId, readyAt] of this.heldWebhooks) {
      if (readyAt <= now) this.heldWebhooks.delete(webhookId);
      else room.set(webhookId, 0);
    }
    return room;
  }

  /** Leaves a webhook over its host's rate unclaimed until the host has room again. */
  private holdForHost(webhookId: string, host: string, now: number): void {
    const readyAt = this.hostLimits.nextTokenAt(host, now);
    this.heldWebhooks.set(webhookId, readyAt);
    this.wake(readyAt - now);
  }

  /**
   * Runs one attempt. The endpoint's slot is freed when the HTTP answer is in; writing the
   * outcome continues in the background (batched), while the delivery's claim keeps it from
   * being claimed again.
   */
  private track(delivery: QueuedDelivery): void {
    const { webhookId } = delivery;
    this.options.onStarted?.(delivery.source);
    const freeSlot = this.slots.take(webhookId);
    const settled = this.attempt(delivery, freeSlot)
      .catch((error: unknown) => {
        this.options.logger.error({ err: error, webhookId }, 'a webhook attempt failed unexpectedly');
      })
      .finally(() => this.settled.delete(settled));
    this.settled.add(settled);
  }

  private async attempt(delivery: QueuedDelivery, freeSlot: (outcome: SlotOutcome) => void): Promise<void> {
    const attemptedAt = new Date();
    let result: AttemptResult | undefined;
    try {
      const event = delivery.event ?? (JSON.parse(delivery.payload) as EventPayload);
      const body = renderPayload(event, delivery.webhookId);
      // webhook-id is the delivery id, the same on every retry, so receivers can deduplicate.
      const headers = signatureHeaders(delivery.id, attemptedAt, body, this.secrets.signingSecrets(delivery, attemptedAt));
      result = await this.send(delivery, event, body, { ...headers });
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

  /**
   * A RabbitMQ sink publishes the same body, signed the same way, with the event id as
   * message_id; a Chatwoot inbox turns the event into Chatwoot API calls.
   */
  private send(delivery: QueuedDelivery, event: EventPayload, body: string, headers: Record<string, string>): Promise<AttemptResult> {
    if (delivery.chatwoot !== null && delivery.sealedTarget !== null) {
      return this.options.chatwoot.deliver({ delivery, event, apiAccessToken: this.options.secretBox.open(delivery.sealedTarget) });
    }
    if (delivery.sealedTarget === null || delivery.rabbitmq === null) return this.options.client.post(delivery.url, body, { ...headers });
    const message = {
      url: this.options.secretBox.open(delivery.sealedTarget),
      exchange: delivery.rabbitmq.exchange,
      routingKey: renderRoutingKey(delivery.rabbitmq.routingKey, event),
      body,
      messageId: delivery.eventId,
      headers,
    };
    return this.options.amqp.publish(message, delivery.id);
  }

  private async record(delivery: ClaimedDelivery, attemptedAt: Date, result: AttemptResult): Promise<void> {
    const confirmed = result.brokerAnswered === true && result.error === null;
    const succeeded =
      confirmed || (result.error === null && result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300);
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
    this.options.onAttempt?.(state, result.durationMs / 1000, (Date.now() - Number(delivery.createdAt)) / 1000);
    const nextAttemptAt = delayMs === null ? null : new Date(attemptedAt.getTime() + delayMs);
    await this.recorder.record({ attempt, state, nextAttemptAt, claimedUntil: delivery.claimedUntil }, gone);
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
  return result?.statusCode != null || result?.brokerAnswered === true ? 'answered' : 'failed';
}
