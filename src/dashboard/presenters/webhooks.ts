import {
  isStreamUrl,
  webhookEventTypes,
  type MessageScope,
  type Webhook,
  type WebhookAttempt,
  type WebhookEventType,
} from '../../domain/webhooks.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { DeliveryWithAttempts } from '../../webhooks/webhooks-service.ts';
import type { ScopedAccount } from '../context.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'webhooks'>;

/** What each event means to someone choosing what to subscribe to. */
const EVENT_EXPLANATIONS = {
  message: 'A message arrived on one of your numbers; message.media follows when its file arrives late.',
  'message.status': 'A message you sent changed status: sent, delivered, read or failed.',
  'message.reaction': 'Someone reacted to a message in a chat of your numbers, or took their reaction away.',
  'message.edited': 'A message in a chat of your numbers was edited, by the other side or from your own phone.',
  'message.revoked': 'A message in a chat of your numbers was deleted for everyone.',
  'session.status': 'One of your numbers connected, disconnected or needs to be linked again.',
  'group.updated':
    'Someone joined, left, was added, removed, promoted or demoted in a group of your numbers, or its subject or description changed.',
  'number.paused':
    'One of your numbers stopped sending: WhatsApp restricted or rate-limited it, or logged it out, or it was paused by hand.',
  'number.resumed': 'A paused number of yours sends again: its pause lifted, someone resumed it, or it was linked again.',
  'number.capped':
    'WhatsApp capped the new chats one of your numbers may start (475): messages to new contacts wait for the cycle to end; replies still go.',
  'contact.identity': 'A person your numbers knew only by LID now has a phone number too.',
  call: 'A call to one of your numbers rang, was missed, accepted, rejected (by you or by the gateway) or ended.',
  'presence.update': 'A contact a number subscribed to came online, went offline, or is typing or recording.',
  'poll.vote': 'Someone voted on a poll in a chat of your numbers, changed their vote or took it back; with the totals.',
} as const satisfies Record<WebhookEventType, string>;

export interface EventTypeOption {
  type: WebhookEventType;
  explanation: string;
}

export const eventTypeOptions: EventTypeOption[] = webhookEventTypes.map((type) => ({ type, explanation: EVENT_EXPLANATIONS[type] }));

/** Response bodies are stored up to 2 KB; the log shows the start and keeps the rest in a tooltip. */
const EXCERPT_DISPLAY_CHARS = 200;

/** A Chatwoot inbox's ids and number as the pages show them (never its token). */
interface ChatwootInboxView {
  accountId: number;
  inboxId: number;
  number: string | null;
}

export interface WebhookRowView {
  id: string;
  url: string;
  chatwoot: ChatwootInboxView | null;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookListView {
  webhooks: WebhookRowView[];
  canManage: boolean;
}

export interface AttemptView {
  at: Date;
  statusCode: number | null;
  durationMs: number;
  excerpt: string | null;
  /** The whole stored excerpt when the display is cut short, else null. */
  fullExcerpt: string | null;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  eventType: string;
  state: string;
  createdAt: Date;
  attemptCount: number;
  /** Only a pending delivery has a next attempt. */
  nextAttemptAt: Date | null;
  lastError: string | null;
  attempts: AttemptView[];
}

export interface WebhookDetailView {
  webhook: WebhookRowView;
  /**
   * A Chatwoot inbox's callback URL, to paste as the Chatwoot inbox's webhook URL; shown to those who
   * manage webhooks only (its token lets Chatwoot send through the inbox). Null otherwise.
   */
  chatwootCallbackUrl: string | null;
  deliveries: DeliveryView[];
  canManage: boolean;
}

/** The webhook form's content: what is stored, or what the user typed before an error. */
export interface WebhookFormView {
  /** Null for a new webhook. */
  webhookId: string | null;
  url: string;
  eventTypes: string[];
  /** direct, group or all: which chats' message events it receives. */
  messageScope: string;
  /** A RabbitMQ sink's exchange and routing-key template; blank for an http(s) webhook. */
  rabbitmqExchange: string;
  rabbitmqRoutingKey: string;
  /** An event stream: no URL, its client connects to `url`, the stream's path (ADR 0068). */
  stream: boolean;
  /** A Chatwoot inbox's ids and number as typed or stored; blank for other webhooks. Its token is never shown. */
  chatwootAccountId: string;
  chatwootInboxId: string;
  chatwootNumber: string;
  /** Whether a stored Chatwoot inbox is being edited: its token field may be left blank to keep the token. */
  chatwootTokenStored: boolean;
  error: string | undefined;
  options: EventTypeOption[];
}

/** The message scopes as the form offers them. */
export const messageScopeOptions: { scope: MessageScope; label: string }[] = [
  { scope: 'direct', label: 'Direct chats only' },
  { scope: 'group', label: 'Group chats only' },
  { scope: 'all', label: 'Direct and group chats' },
];

function toWebhookRow(webhook: Webhook): WebhookRowView {
  return {
    id: webhook.id,
    url: webhook.url,
    chatwoot: webhook.chatwoot && {
      accountId: webhook.chatwoot.accountId,
      inboxId: webhook.chatwoot.inboxId,
      number: webhook.chatwoot.number,
    },
    eventTypes: webhook.eventTypes,
    enabled: webhook.enabled,
    disabledReason: webhook.disabledReason,
    failingSince: webhook.failingSince,
    createdAt: webhook.createdAt,
    updatedAt: webhook.updatedAt,
  };
}

export async function presentWebhookList(gateway: Services, account: ScopedAccount, canManage: boolean): Promise<WebhookListView> {
  const webhooks = await gateway.webhooks.listWebhooks(account.scope);
  return { webhooks: webhooks.map(toWebhookRow), canManage };
}

/** The webhook and its delivery log; another account's webhook id is not found. */
export async function presentWebhookDetail(
  gateway: Services,
  account: ScopedAccount,
  webhookId: string,
  canManage: boolean,
  /** The gateway's address as the viewer reaches it, before a callback path. */
  origin: string,
): Promise<WebhookDetailView> {
  const webhook = await gateway.webhooks.getWebhook(account.scope, webhookId);
  const deliveries = await gateway.webhooks.listDeliveries(account.scope, webhookId);
  const callbackPath = canManage ? (await gateway.webhooks.chatwootCallbackPaths([webhook])).get(webhook.id) : undefined;
  return {
    webhook: toWebhookRow(webhook),
    chatwootCallbackUrl: callbackPath === undefined ? null : `${origin}${callbackPath}`,
    deliveries: deliveries.map(toDeliveryView),
    canManage,
  };
}

const blankChatwootFields = { chatwootAccountId: '', chatwootInboxId: '', chatwootNumber: '', chatwootTokenStored: false };

export function newWebhookForm(): WebhookFormView {
  return {
    webhookId: null,
    url: '',
    eventTypes: [...webhookEventTypes],
    messageScope: 'direct',
    rabbitmqExchange: '',
    rabbitmqRoutingKey: '',
    stream: false,
    ...blankChatwootFields,
    error: undefined,
    options: eventTypeOptions,
  };
}

export async function presentWebhookForm(gateway: Services, account: ScopedAccount, webhookId: string): Promise<WebhookFormView> {
  const webhook = await gateway.webhooks.getWebhook(account.scope, webhookId);
  return {
    webhookId: webhook.id,
    url: webhook.url,
    eventTypes: webhook.eventTypes,
    messageScope: webhook.messageScope,
    rabbitmqExchange: webhook.rabbitmq?.exchange ?? '',
    rabbitmqRoutingKey: webhook.rabbitmq?.routingKey ?? '',
    stream: isStreamUrl(webhook.url),
    chatwootAccountId: webhook.chatwoot === null ? '' : String(webhook.chatwoot.accountId),
    chatwootInboxId: webhook.chatwoot === null ? '' : String(webhook.chatwoot.inboxId),
    chatwootNumber: webhook.chatwoot?.number ?? '',
    chatwootTokenStored: webhook.chatwoot !== null,
    error: undefined,
    options: eventTypeOptions,
  };
}

function toDeliveryView(entry: DeliveryWithAttempts): DeliveryView {
  const { delivery } = entry;
  return {
    id: delivery.id,
    eventType: delivery.eventType,
    state: delivery.state,
    createdAt: delivery.createdAt,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: delivery.state === 'pending' ? delivery.nextAttemptAt : null,
    lastError: delivery.lastError,
    attempts: entry.attempts.map(toAttemptView),
  };
}

function toAttemptView(attempt: WebhookAttempt): AttemptView {
  const excerpt = attempt.responseExcerpt;
  const cut = excerpt !== null && excerpt.length > EXCERPT_DISPLAY_CHARS;
  return {
    at: attempt.attemptedAt,
    statusCode: attempt.statusCode,
    durationMs: attempt.durationMs,
    excerpt: cut ? `${excerpt.slice(0, EXCERPT_DISPLAY_CHARS)}…` : excerpt,
    fullExcerpt: cut ? excerpt : null,
    error: attempt.error,
  };
}
