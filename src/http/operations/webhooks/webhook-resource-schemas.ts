import { webhookEventTypes, messageScopes, type Webhook, type WebhookAttempt } from '../../../domain/webhooks.ts';
import type { DeliveryWithAttempts } from '../../../webhooks/webhooks-service.ts';
import { MAX_WEBHOOK_DESCRIPTION_LENGTH } from '../../../webhooks/webhooks-service.ts';
import { ref } from '../../schema-refs.ts';

// The webhooks a key with the `webhooks` scope manages (docs/webhooks.md, "Over the API"): the
// resource, its deliveries and their attempts, as the document names them.

const time = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

function rabbitmqComponentField(description: string) {
  return {
    type: 'object',
    description,
    required: ['exchange', 'routing_key'],
    additionalProperties: false,
    properties: {
      exchange: { type: 'string', maxLength: 255, description: 'The exchange published to; "" is the default exchange.' },
      routing_key: {
        type: 'string',
        minLength: 1,
        maxLength: 255,
        description: 'The routing key, a template: {event} becomes the event (message.status), {number} the number of yours it concerns.',
      },
    },
  } as const;
}

function chatwootField(description: string, required: readonly string[]) {
  return {
    type: 'object',
    description,
    required,
    additionalProperties: false,
    properties: {
      account_id: { type: 'integer', minimum: 1, description: "The Chatwoot account's id (in Chatwoot's URLs: /app/accounts/{id})." },
      inbox_id: { type: 'integer', minimum: 1, description: 'The id of the API channel inbox the messages go to.' },
      api_access_token: {
        type: 'string',
        minLength: 1,
        maxLength: 512,
        description: 'The access token of a Chatwoot agent or agent bot of the inbox; stored sealed, never shown.',
      },
      number: {
        type: ['string', 'null'],
        maxLength: 32,
        description: 'One number of your account the inbox serves (E.164); null or left out: all of them.',
      },
    },
  } as const;
}

const webhookComponent = {
  $id: 'Webhook',
  type: 'object',
  description: 'A webhook of your account: where the gateway POSTs which events. Its secret is shown only when made or rotated.',
  required: [
    'id',
    'url',
    'events',
    'message_scope',
    'description',
    'enabled',
    'disabled_reason',
    'failing_since',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', description: 'wh_…' },
    url: {
      type: 'string',
      description:
        "The receiver, an absolute http(s) URL; for a RabbitMQ sink, the broker's amqp(s) URL without its password; for an event " +
        'stream, the path its WebSocket client connects to (/webhooks/{id}/stream).',
    },
    rabbitmq: rabbitmqComponentField('Only on a RabbitMQ sink: where it publishes.'),
    chatwoot: {
      type: 'object',
      description: 'Only on a Chatwoot inbox (docs/integrations.md): where it posts. The access token is never shown.',
      required: ['account_id', 'inbox_id', 'number'],
      additionalProperties: false,
      properties: {
        account_id: { type: 'integer' },
        inbox_id: { type: 'integer' },
        number: { type: ['string', 'null'], description: 'The one number it serves; null: all of the account’s.' },
        callback_path: {
          type: 'string',
          description:
            'The path (under your gateway’s public URL) to set as the Chatwoot API inbox’s webhook URL. Its token is the ' +
            'inbox’s own: rotating the signing secret leaves it as it is.',
        },
      },
    },
    events: { type: 'array', items: { type: 'string', enum: webhookEventTypes }, description: 'The events it receives.' },
    message_scope: {
      type: 'string',
      enum: messageScopes,
      description: "Which chats' message events it receives: direct chats, groups, or all.",
    },
    description: { type: ['string', 'null'], description: 'What it is for, as its maker said.' },
    enabled: { type: 'boolean', description: 'Whether it receives deliveries.' },
    disabled_reason: { type: ['string', 'null'], description: 'Why it is disabled, when it is.' },
    failing_since: { ...nullableTime, description: 'When its current run of failed deliveries began; null while healthy.' },
    created_at: time,
    updated_at: time,
  },
} as const;

const webhookAttemptComponent = {
  $id: 'WebhookAttempt',
  type: 'object',
  required: ['id', 'attempted_at', 'duration_ms', 'status_code', 'response_excerpt', 'error'],
  properties: {
    id: { type: 'string', description: 'att_…' },
    attempted_at: time,
    duration_ms: { type: 'integer' },
    status_code: { type: ['integer', 'null'], description: "The receiver's HTTP status; null when it gave none." },
    response_excerpt: { type: ['string', 'null'], description: "The start of the receiver's answer." },
    error: { type: ['string', 'null'], description: 'Why the attempt failed without an HTTP answer (timeout, dns, refused, …).' },
  },
} as const;

const webhookDeliveryComponent = {
  $id: 'WebhookDelivery',
  type: 'object',
  description: 'One event on its way to one webhook, with every attempt made, oldest first.',
  required: [
    'id',
    'webhook_id',
    'event_id',
    'event',
    'state',
    'attempt_count',
    'next_attempt_at',
    'last_attempt_at',
    'last_status_code',
    'last_error',
    'created_at',
    'attempts',
  ],
  properties: {
    id: { type: 'string', description: 'dlv_…, the webhook-id header of every attempt: the same on a redelivery.' },
    webhook_id: { type: 'string' },
    event_id: { type: 'string', description: 'The event delivered, evt_….' },
    event: { type: 'string', description: 'The event, e.g. message or test.' },
    state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempt_count: { type: 'integer' },
    next_attempt_at: { ...time, description: 'When it is next tried, while pending.' },
    last_attempt_at: nullableTime,
    last_status_code: { type: ['integer', 'null'] },
    last_error: { type: ['string', 'null'] },
    created_at: time,
    attempts: { type: 'array', items: ref('WebhookAttempt') },
  },
} as const;

export const webhookResourceComponents = [webhookComponent, webhookAttemptComponent, webhookDeliveryComponent];

export const webhookParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', maxLength: 64, description: 'The webhook, wh_…' } },
} as const;

const eventsField = {
  type: 'array',
  minItems: 1,
  maxItems: webhookEventTypes.length,
  uniqueItems: true,
  items: { type: 'string', enum: webhookEventTypes },
  description: 'The events it receives (at least one).',
} as const;

const descriptionField = {
  type: ['string', 'null'],
  maxLength: MAX_WEBHOOK_DESCRIPTION_LENGTH,
  description: `What it is for, up to ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters; null clears it.`,
} as const;

const urlField = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description:
    'The receiver: an absolute http(s) URL whose host resolves to an address webhooks may reach (not private, loopback or reserved, ' +
    'unless the operator allowed it). An amqp:// or amqps:// URL (user, password and vhost in it) makes a RabbitMQ sink, which needs ' +
    'rabbitmq; it is stored sealed and shown without its password.',
} as const;

const messageScopeField = {
  type: 'string',
  enum: messageScopes,
  description: "Which chats' message events it receives (direct by default).",
} as const;

export const createWebhookBody = {
  type: 'object',
  required: ['events'],
  additionalProperties: false,
  properties: {
    url: { ...urlField, description: `${urlField.description} Required unless stream is true.` },
    stream: {
      type: 'boolean',
      description:
        'true makes an event stream instead of a webhook: it takes no url, and its client reads its events over a WebSocket at ' +
        'GET /webhooks/{id}/stream, resuming after the last event_id it saw (docs/webhooks.md, "Event streams").',
    },
    events: eventsField,
    description: descriptionField,
    message_scope: messageScopeField,
    rabbitmq: rabbitmqComponentField('For a RabbitMQ sink (an amqp(s) url): the exchange and routing-key template it publishes with.'),
    chatwoot: chatwootField(
      "Makes a Chatwoot inbox (the url is Chatwoot's base URL): incoming messages become messages of the inbox's conversations " +
        '(docs/integrations.md).',
      ['account_id', 'inbox_id', 'api_access_token'],
    ),
    enabled: { type: 'boolean', description: 'Whether it receives deliveries at once (true by default).' },
  },
} as const;

export const updateWebhookBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url: urlField,
    events: eventsField,
    description: descriptionField,
    message_scope: messageScopeField,
    rabbitmq: rabbitmqComponentField("A RabbitMQ sink's new exchange and routing-key template."),
    chatwoot: chatwootField("A Chatwoot inbox's new ids, number or access token; what is left out is kept.", ['account_id', 'inbox_id']),
    enabled: { type: 'boolean', description: 'Turn deliveries on or off; turning on clears a disabled_reason.' },
  },
} as const;

/** A webhook as the API shows it; a Chatwoot inbox's with its callback path (WebhooksService.chatwootCallbackPaths). */
export function presentWebhook(webhook: Webhook, callbackPaths: ReadonlyMap<string, string> = new Map()) {
  const callbackPath = callbackPaths.get(webhook.id);
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.eventTypes,
    message_scope: webhook.messageScope,
    description: webhook.description,
    ...(webhook.rabbitmq !== null && { rabbitmq: { exchange: webhook.rabbitmq.exchange, routing_key: webhook.rabbitmq.routingKey } }),
    ...(webhook.chatwoot !== null && {
      chatwoot: {
        account_id: webhook.chatwoot.accountId,
        inbox_id: webhook.chatwoot.inboxId,
        number: webhook.chatwoot.number,
        ...(callbackPath !== undefined && { callback_path: callbackPath }),
      },
    }),
    enabled: webhook.enabled,
    disabled_reason: webhook.disabledReason,
    failing_since: webhook.failingSince?.toISOString() ?? null,
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
  };
}

function presentAttempt(attempt: WebhookAttempt) {
  return {
    id: attempt.id,
    attempted_at: attempt.attemptedAt.toISOString(),
    duration_ms: attempt.durationMs,
    status_code: attempt.statusCode,
    response_excerpt: attempt.responseExcerpt,
    error: attempt.error,
  };
}

export function presentDelivery({ delivery, attempts }: DeliveryWithAttempts) {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: delivery.eventId,
    event: delivery.eventType,
    state: delivery.state,
    attempt_count: delivery.attemptCount,
    next_attempt_at: delivery.nextAttemptAt.toISOString(),
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    created_at: delivery.createdAt.toISOString(),
    attempts: attempts.map(presentAttempt),
  };
}
