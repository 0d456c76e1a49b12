import { newId } from '../domain/ids.ts';
import { chatwootTakes, inScope, isStreamUrl, STREAM_HELD, subscriptionOf, type EventPayload, type Webhook } from '../domain/webhooks.ts';
import type { Executor } from '../store/database.ts';
import type { Message } from '../domain/model.ts';
import { insertEventWithDeliveries, type EventDelivery, type NewEvent } from '../store/repositories/deliveries.ts';
import type { ClaimedDelivery } from '../store/repositories/delivery-claims.ts';
import { insertMessage, insertMessageWithEvent } from '../store/repositories/messages.ts';
import { listEnabledWebhooks, type EnabledWebhook } from '../store/repositories/webhooks.ts';
import type { CachedLookups } from '../store/cached-lookups.ts';
import type { EndOfBatch } from '../store/group-commit.ts';
import { queueEventInsert } from '../store/repositories/event-batches.ts';

/**
 * A delivery written with this node's claim on it, to be sent from memory as soon as the write
 * commits: no claim needed. The parsed event rides along so it is not parsed back from text.
 */
type HandedOverDelivery = ClaimedDelivery & { event: EventPayload };

/** What an enqueue wrote: how many deliveries, and which of them this node claimed for itself. */
export interface Enqueued {
  count: number;
  handedOver: HandedOverDelivery[];
}

export const NOTHING_QUEUED: Enqueued = Object.freeze({ count: 0, handedOver: [] as HandedOverDelivery[] }) as Enqueued;

/** Several writes' deliveries of one transaction, handed to the worker together after its commit. */
export function mergeQueued(parts: readonly Enqueued[]): Enqueued {
  return { count: parts.reduce((sum, part) => sum + part.count, 0), handedOver: parts.flatMap((part) => part.handedOver) };
}

/**
 * The delivery worker, as the writers of events see it. Before the write it says which new
 * deliveries it will send itself (by the claim expiry written on them); after the commit it is handed
 * what was written. Deliveries it declines wait in the outbox for any node's claim.
 */
export interface DeliveryNotifier {
  /** The claim expiry to write on a new delivery to this webhook, or null to leave it to any node's claim. */
  claimForNew(webhookId: string, now: number): number | null;
  /** Called after the commit; without an argument, only says that claimable work may be waiting. */
  deliveriesQueued(enqueued?: Enqueued): void;
  /** The node's lookup cache, through which the account's enabled webhooks are read; absent, they are read from the database. */
  readonly lookups?: CachedLookups;
}

/** For writers with no worker of their own at hand: every delivery waits for a claim. */
export const CLAIMS_ONLY: DeliveryNotifier = Object.freeze({ claimForNew: () => null, deliveriesQueued: () => undefined });

/**
 * Writes an event and one delivery per enabled, subscribed webhook of the account. It must run
 * in the same transaction as the change the event reports: that shared commit is the promise
 * that every stored message is delivered at least once, whatever crashes afterwards. The
 * caller passes the result to `notifier.deliveriesQueued` once the transaction has committed.
 */
export async function enqueueEvent(
  db: Executor,
  notifier: DeliveryNotifier,
  accountId: string,
  payload: EventPayload,
  at: Date,
): Promise<Enqueued> {
  const planned = eventFor(accountId, payload, await subscribedWebhooks(db, accountId, payload, notifier.lookups), at, notifier);
  if (planned.deliveries.length > 0) await insertEventWithDeliveries(db, planned.event, planned.deliveries);
  return planned.enqueued;
}

/**
 * enqueueEvent for a write in a group-commit batch: the event and its deliveries are written at
 * the batch's end with the batch's other events (event-batches.ts), in the same commit.
 */
export async function queueEvent(
  db: Executor,
  batch: EndOfBatch,
  notifier: DeliveryNotifier,
  accountId: string,
  payload: EventPayload,
  at: Date,
): Promise<Enqueued> {
  const planned = eventFor(accountId, payload, await subscribedWebhooks(db, accountId, payload, notifier.lookups), at, notifier);
  queueEventInsert(batch, planned.event, planned.deliveries);
  return planned.enqueued;
}

/** Stores a message together with the event that reports it, as enqueueEvent would, in as few statements as the database allows. */
export async function insertMessageAndEnqueue(
  db: Executor,
  notifier: DeliveryNotifier,
  message: Message,
  payload: EventPayload,
): Promise<Enqueued> {
  const planned = eventFor(
    message.accountId,
    payload,
    await subscribedWebhooks(db, message.accountId, payload, notifier.lookups),
    message.createdAt,
    notifier,
  );
  if (planned.deliveries.length === 0) await insertMessage(db, message);
  else await insertMessageWithEvent(db, message, planned.event, planned.deliveries);
  return planned.enqueued;
}

async function subscribedWebhooks(
  db: Executor,
  accountId: string,
  payload: EventPayload,
  lookups: CachedLookups | undefined,
): Promise<EnabledWebhook[]> {
  const subscription = subscriptionOf(payload.event);
  const enabled = lookups === undefined ? await listEnabledWebhooks(db, accountId) : await lookups.enabledWebhooks(db, accountId);
  return enabled.filter(
    (webhook) =>
      webhook.eventTypes.includes(subscription as Webhook['eventTypes'][number]) &&
      inScope(webhook.messageScope, payload) &&
      (webhook.chatwoot === null || chatwootTakes(webhook.chatwoot, payload)),
  );
}

interface PlannedEvent {
  event: NewEvent;
  deliveries: EventDelivery[];
  enqueued: Enqueued;
}

/** Without a notifier (the test event) nothing is claimed: every delivery waits for a claim. */
function eventFor(
  accountId: string,
  payload: EventPayload,
  webhooks: (Webhook | EnabledWebhook)[],
  at: Date,
  notifier?: DeliveryNotifier,
): PlannedEvent {
  const event: NewEvent = { id: newId('event'), accountId, eventType: payload.event, payload: JSON.stringify(payload), createdAt: at };
  const now = Date.now();
  const deliveries: EventDelivery[] = [];
  const handedOver: HandedOverDelivery[] = [];
  for (const webhook of webhooks) {
    // A stream's deliveries wait for the connection holding it, never for a worker's claim.
    if (isStreamUrl(webhook.url)) {
      deliveries.push({ id: newId('delivery'), webhookId: webhook.id, claimedUntil: STREAM_HELD });
      continue;
    }
    const secrets = 'secrets' in webhook ? webhook.secrets : undefined;
    const claimedUntil = secrets === undefined ? null : (notifier?.claimForNew(webhook.id, now) ?? null);
    const delivery: EventDelivery = { id: newId('delivery'), webhookId: webhook.id, claimedUntil };
    deliveries.push(delivery);
    if (secrets === undefined || claimedUntil === null) continue;
    handedOver.push({
      id: delivery.id,
      webhookId: webhook.id,
      url: webhook.url,
      eventType: event.eventType,
      payload: event.payload,
      event: payload,
      eventId: event.id,
      attemptCount: 0,
      createdAt: at.getTime(),
      sealedSecret: secrets.current,
      sealedPreviousSecret: secrets.previous,
      previousSecretExpiresAt: secrets.previousExpiresAt,
      sealedTarget: 'sealedTarget' in webhook ? webhook.sealedTarget : null,
      rabbitmq: webhook.rabbitmq,
      chatwoot: webhook.chatwoot,
      claimedUntil,
    });
  }
  return { event, deliveries, enqueued: { count: deliveries.length, handedOver } };
}

/** The operator's test event goes to one webhook, subscribed or not, through a claim. */
export async function enqueueTestEvent(db: Executor, webhook: Webhook, payload: EventPayload, at: Date): Promise<Enqueued> {
  const planned = eventFor(webhook.accountId, payload, [webhook], at);
  await insertEventWithDeliveries(db, planned.event, planned.deliveries);
  return planned.enqueued;
}
