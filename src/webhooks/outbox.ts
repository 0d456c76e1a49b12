import { newId } from '../domain/ids.ts';
import type { EventPayload, Webhook } from '../domain/webhooks.ts';
import type { Executor } from '../store/database.ts';
import type { Message } from '../domain/model.ts';
import { insertEventWithDeliveries, type EventDelivery, type NewEvent } from '../store/repositories/deliveries.ts';
import { insertMessage, insertMessageWithEvent } from '../store/repositories/messages.ts';
import { listEnabledWebhooks } from '../store/repositories/webhooks.ts';

/**
 * Writes an event and one delivery per enabled, subscribed webhook of the account. It must run
 * in the same transaction as the change the event reports: that shared commit is the promise
 * that every stored message is delivered at least once, whatever crashes afterwards.
 * Returns how many deliveries were queued, so the caller can wake the worker.
 */
export async function enqueueEvent(db: Executor, accountId: string, payload: EventPayload, at: Date): Promise<number> {
  const { event, deliveries } = eventFor(accountId, payload, await subscribedWebhooks(db, accountId, payload), at);
  if (deliveries.length > 0) await insertEventWithDeliveries(db, event, deliveries);
  return deliveries.length;
}

/** Stores a message together with the event that reports it, as enqueueEvent would, in as few statements as the database allows. */
export async function insertMessageAndEnqueue(db: Executor, message: Message, payload: EventPayload): Promise<number> {
  const { event, deliveries } = eventFor(message.accountId, payload, await subscribedWebhooks(db, message.accountId, payload), message.createdAt);
  if (deliveries.length === 0) await insertMessage(db, message);
  else await insertMessageWithEvent(db, message, event, deliveries);
  return deliveries.length;
}

async function subscribedWebhooks(db: Executor, accountId: string, payload: EventPayload): Promise<Webhook[]> {
  return (await listEnabledWebhooks(db, accountId)).filter((webhook) => webhook.eventTypes.includes(payload.event as Webhook['eventTypes'][number]));
}

function eventFor(accountId: string, payload: EventPayload, webhooks: Webhook[], at: Date): { event: NewEvent; deliveries: EventDelivery[] } {
  return {
    event: { id: newId('event'), accountId, eventType: payload.event, payload: JSON.stringify(payload), createdAt: at },
    deliveries: webhooks.map((webhook) => ({ id: newId('delivery'), webhookId: webhook.id })),
  };
}

/** The operator's test event goes to one webhook, subscribed or not. */
export async function enqueueTestEvent(db: Executor, webhook: Webhook, payload: EventPayload, at: Date): Promise<number> {
  const { event, deliveries } = eventFor(webhook.accountId, payload, [webhook], at);
  await insertEventWithDeliveries(db, event, deliveries);
  return 1;
}

/** Lets writers tell the delivery worker that work is waiting, without knowing the worker. */
export interface DeliveryNotifier {
  deliveriesQueued(): void;
}
