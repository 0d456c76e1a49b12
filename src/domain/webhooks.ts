export const webhookEventTypes = [
  'message',
  'message.status',
  'message.reaction',
  'message.edited',
  'message.revoked',
  'session.status',
  'group.updated',
  'number.paused',
  'number.resumed',
  'number.capped',
  'contact.identity',
  'call',
  'presence.update',
  'poll.vote',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];
/**
 * What a delivery can carry: a subscribable event, the test event an operator sends, or
 * `message.media`, which completes a `message` event and goes wherever that one went.
 */
export type DeliveredEventType = WebhookEventType | 'test' | 'message.media';

/** The subscription that receives an event: `message.media` belongs to its message. */
export function subscriptionOf(event: DeliveredEventType): DeliveredEventType {
  return event === 'message.media' ? 'message' : event;
}

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (webhookEventTypes as readonly string[]).includes(value);
}

/**
 * Which chats' message events a webhook receives: direct chats, group chats, or all. Webhooks
 * made before groups existed receive direct ones only, so that an upgrade floods nobody.
 */
export type MessageScope = 'direct' | 'group' | 'all';
export const messageScopes: readonly MessageScope[] = ['direct', 'group', 'all'];

export function isMessageScope(value: string): value is MessageScope {
  return (messageScopes as readonly string[]).includes(value);
}

/**
 * Whether a webhook of `scope` receives the event: a message event goes by its chat (`group`
 * is null for a direct one); the other events, group.updated included, go to every scope.
 */
export function inScope(scope: MessageScope, payload: EventPayload): boolean {
  if (!payload.event.startsWith('message') || scope === 'all') return true;
  return (payload.group === null) === (scope === 'direct');
}

export interface Webhook {
  id: string;
  accountId: string;
  url: string;
  eventTypes: WebhookEventType[];
  messageScope: MessageScope;
  /** What it is for, as its maker said; null when they said nothing. */
  description: string | null;
  /** Where a RabbitMQ sink publishes; null for an HTTP webhook (docs/adr/0065-event-sinks.md). */
  rabbitmq: RabbitmqTarget | null;
  /** Where a Chatwoot inbox posts; null for any other destination (docs/adr/0067-chatwoot-inbox.md). */
  chatwoot: ChatwootInbox | null;
  enabled: boolean;
  disabledReason: string | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A RabbitMQ sink's destination: the exchange, and the routing key as a template whose
 * placeholders ({event}, {number}) are filled from each event.
 */
export interface RabbitmqTarget {
  exchange: string;
  routingKey: string;
}

/**
 * An event stream's URL is the path its client connects to (`/webhooks/{id}/stream`, a WebSocket;
 * docs/adr/0068-event-streams.md): relative, so no HTTP or AMQP URL is ever taken for one.
 */
export function streamPath(webhookId: string): string {
  return `/webhooks/${webhookId}/stream`;
}

/** Whether a destination is an event stream, which its client's connection takes its events from. */
export function isStreamUrl(url: string): boolean {
  return url.startsWith('/');
}

/**
 * The claim written on a stream's deliveries: one that never lapses, so no delivery worker ever
 * takes one. Only the connection holding the stream sends them (src/webhooks/event-streams.ts).
 */
export const STREAM_HELD = 8_640_000_000_000_000;

/**
 * A Chatwoot inbox's destination: the webhook's URL is Chatwoot's base URL, its sealed target
 * the API access token. `number` limits it to one number of the account (null: all of them).
 */
export interface ChatwootInbox {
  accountId: number;
  inboxId: number;
  number: string | null;
}

/** The events a Chatwoot inbox takes: the messages people send, and what became of the agents' replies. */
export const chatwootEventTypes: WebhookEventType[] = ['message', 'message.status'];

/** Whether a Chatwoot inbox takes the event: a direct chat's, of its number when it has one. */
export function chatwootTakes(inbox: ChatwootInbox, payload: EventPayload): boolean {
  if (payload.group !== null && payload.group !== undefined) return false;
  return inbox.number === null || eventNumber(payload) === inbox.number;
}

/** Whether a destination URL names a RabbitMQ broker rather than an HTTP endpoint. */
export function isAmqpUrl(url: string): boolean {
  return /^amqps?:\/\//i.test(url);
}

/**
 * The number an event concerns, for a routing key: the number of a session, pause or group
 * event, and for a message event the number of ours in the chat (the recipient of an incoming
 * message, the sender of one we sent).
 */
function eventNumber(payload: EventPayload): string {
  const ours = payload.phone ?? payload.number ?? (payload.status === 'received' ? payload.to_phone : payload.from_phone);
  return typeof ours === 'string' && ours !== '' ? ours : 'none';
}

/** A routing key from its template; anything but the two placeholders is kept as written. */
export function renderRoutingKey(template: string, payload: EventPayload): string {
  return template.replace(/\{(event|number)\}/g, (_, name: string) => (name === 'event' ? payload.event : eventNumber(payload)));
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: DeliveredEventType;
  webhookId: string;
  accountId: string;
  state: DeliveryState;
  attemptCount: number;
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
}

/** Why an attempt failed without an HTTP answer, as recorded in the attempt log. */
export type AttemptError =
  | 'timeout'
  | 'dns'
  | 'refused'
  | 'reset'
  | 'tls'
  | 'blocked_address'
  | 'redirect'
  | 'network'
  | 'internal'
  // A RabbitMQ broker refused the message, or had no queue to route it to.
  | 'nacked'
  | 'unroutable';

export interface WebhookAttempt {
  id: string;
  deliveryId: string;
  webhookId: string;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number | null;
  responseExcerpt: string | null;
  error: string | null;
}

/** An event's body before the per-webhook `webhook_id` is added. */
export type EventPayload = { event: DeliveredEventType } & Record<string, unknown>;

/** The bytes that are signed and sent: the event with the receiving webhook's id second. */
export function renderPayload(payload: EventPayload, webhookId: string): string {
  const { event, ...rest } = payload;
  return JSON.stringify({ event, webhook_id: webhookId, ...rest });
}
