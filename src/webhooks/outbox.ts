import { newId } from '../domain/ids.ts';
import type { EventPayload, Webhook } from '../domain/webhooks.ts';
import type { Executor } from '../store/database.ts';
import { insertDeliveries, insertEvent } from '../store/repositories/deliveries.ts';
import { listEnabledWebhooks } from '../store/repositories/webhooks.ts';

/**
 * Writes an event and one delivery per enabled, subscribed webhook of the account. It must run
 * in the same transaction as the change the event reports: that shared commit is the promise
 * that every stored message is delivered at least once, whatever crashes afterwards.
 * Returns how many deliveries were queued, so the caller can wake the worker.
 */
export async function enqueueEvent(db: Executor, accountId: string, payload: EventPayload, at: Date): Promise<number> {
  const webhooks = (await listEnabledWebhooks(db, accountId)).filter((webhook) =>
    webhook.eventTypes.includes(payload.event as Webhook['eventTypes'][number]),
  );
  return enqueueFor(db, accountId, payload, webhooks, at);
}

/** The operator's test event goes to one webhook, subscribed or not. */
export function enqueueTestEvent(db: Executor, webhook: Webhook, payload: EventPayload, at: Date): Promise<number> {
  return enqueueFor(db, webhook.accountId, payload, [webhook], at);
}

async function enqueueFor(db: Executor, accountId: string, payload: EventPayload, webhooks: Webhook[], at: Date): Promise<number> {
  if (webhooks.length === 0) return 0;
  const eventId = newId('event');
  await insertEvent(db, { id: eventId, accountId, eventType: payload.event, payload: JSON.stringify(payload), createdAt: at });
  await insertDeliveries(
    db,
    webhooks.map((webhook) => ({ id: newId('delivery'), eventId, webhookId: webhook.id, accountId, at })),
  );
  return webhooks.length;
}

/** Lets writers tell the delivery worker that work is waiting, without knowing the worker. */
export interface DeliveryNotifier {
  deliveriesQueued(): void;
}
