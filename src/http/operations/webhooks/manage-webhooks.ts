import { FOR_API_CLIENTS } from '../../caller-constraint.ts';
import { ref } from '../../schema-refs.ts';
import { KEYED_ERRORS } from '../error-responses.ts';
import { defineOperation, ok } from '../operation.ts';
import { createWebhookBody, presentWebhook, updateWebhookBody, webhookParams } from './webhook-resource-schemas.ts';

// A webhook's life over the API, for keys with the `webhooks` scope. Each one goes through the
// same WebhooksService as the dashboard and the CLI: the same address guard, limit and audit row.
// The unprefixed paths are the dashboard's too, so they answer the API only to a Bearer key or a
// JSON body (caller-constraint.ts).

/** What the address guard and the event list can refuse a URL or events for. */
const WEBHOOK_INPUT_ERRORS = ['invalid_webhook_url', 'webhook_url_blocked', 'invalid_event_type'] as const;
const ADDRESS_NOTE =
  'The URL passes the same address guard as deliveries (no private, loopback or reserved address unless the operator allowed the ' +
  'host).';

export const listWebhooks = defineOperation({}, ['webhooks'])({
  method: 'GET',
  scope: 'webhooks',
  path: '/webhooks',
  operationId: 'listWebhooks',
  summary: "List your account's webhooks",
  description: 'Every webhook of the account, oldest first, without their secrets.',
  tag: 'webhooks',
  answers: { 200: { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: ref('Webhook') } } } },
  errors: KEYED_ERRORS,
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope }, { webhooks }) => {
    const listed = await webhooks.listWebhooks(scope);
    const callbackPaths = await webhooks.chatwootCallbackPaths(listed);
    return ok({ webhooks: listed.map((webhook) => presentWebhook(webhook, callbackPaths)) });
  },
});

export const getWebhook = defineOperation({ params: webhookParams }, ['webhooks'])({
  method: 'GET',
  scope: 'webhooks',
  path: '/webhooks/:id',
  operationId: 'getWebhook',
  summary: 'A webhook',
  description: "One webhook of the account; another account's is not found.",
  tag: 'webhooks',
  answers: { 200: ref('Webhook') },
  errors: [...KEYED_ERRORS, 'webhook_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params }, { webhooks }) => {
    const webhook = await webhooks.getWebhook(scope, params.id);
    return ok(presentWebhook(webhook, await webhooks.chatwootCallbackPaths([webhook])));
  },
});

export const createWebhook = defineOperation({ body: createWebhookBody }, ['webhooks'])({
  method: 'POST',
  scope: 'webhooks',
  path: '/webhooks',
  operationId: 'createWebhook',
  summary: 'Create a webhook',
  description:
    `Registers a receiver for the events named. ${ADDRESS_NOTE} An account has at most WAGW_WEBHOOKS_PER_ACCOUNT webhooks (409 ` +
    'webhook_limit_reached). The answer carries the signing secret (whsec_…), shown this once: keep it to verify deliveries ' +
    '(docs/webhooks.md).',
  tag: 'webhooks',
  answers: {
    201: {
      allOf: [
        ref('Webhook'),
        {
          type: 'object',
          required: ['secret'],
          properties: { secret: { type: 'string', description: 'The signing secret, whsec_…; shown only now.' } },
        },
      ],
    },
  },
  errors: [...KEYED_ERRORS, ...WEBHOOK_INPUT_ERRORS, 'webhook_limit_reached'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, body, actor }, { webhooks }) => {
    const { webhook, secret } = await webhooks.createWebhook(
      scope,
      {
        ...(body.url !== undefined && { url: body.url }),
        ...(body.stream !== undefined && { stream: body.stream }),
        eventTypes: body.events,
        ...(body.description !== undefined && { description: body.description }),
        ...(body.message_scope !== undefined && { messageScope: body.message_scope }),
        ...(body.rabbitmq !== undefined && { rabbitmq: { exchange: body.rabbitmq.exchange, routingKey: body.rabbitmq.routing_key } }),
        ...(body.chatwoot !== undefined && { chatwoot: chatwootInput(body.chatwoot) }),
        ...(body.enabled !== undefined && { enabled: body.enabled }),
      },
      actor,
    );
    return { statusCode: 201, body: { ...presentWebhook(webhook, await webhooks.chatwootCallbackPaths([webhook])), secret } };
  },
});

export const updateWebhook = defineOperation({ params: webhookParams, body: updateWebhookBody }, ['webhooks'])({
  method: 'PATCH',
  scope: 'webhooks',
  path: '/webhooks/:id',
  operationId: 'updateWebhook',
  summary: 'Change a webhook',
  description: `Changes what is given and answers the webhook as it is now. ${ADDRESS_NOTE}`,
  tag: 'webhooks',
  answers: { 200: ref('Webhook') },
  errors: [...KEYED_ERRORS, ...WEBHOOK_INPUT_ERRORS, 'webhook_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params, body, actor }, { webhooks }) => {
    const webhook = await webhooks.updateWebhook(
      scope,
      params.id,
      {
        ...(body.url !== undefined && { url: body.url }),
        ...(body.events !== undefined && { eventTypes: body.events }),
        ...(body.description !== undefined && { description: body.description }),
        ...(body.message_scope !== undefined && { messageScope: body.message_scope }),
        ...(body.rabbitmq !== undefined && { rabbitmq: { exchange: body.rabbitmq.exchange, routingKey: body.rabbitmq.routing_key } }),
        ...(body.chatwoot !== undefined && { chatwoot: chatwootInput(body.chatwoot) }),
        ...(body.enabled !== undefined && { enabled: body.enabled }),
      },
      actor,
    );
    return ok(presentWebhook(webhook, await webhooks.chatwootCallbackPaths([webhook])));
  },
});

export const deleteWebhook = defineOperation({ params: webhookParams }, ['webhooks'])({
  method: 'DELETE',
  scope: 'webhooks',
  path: '/webhooks/:id',
  operationId: 'deleteWebhook',
  summary: 'Delete a webhook',
  description: 'Removes the webhook and its deliveries not yet made; answers it as it was.',
  tag: 'webhooks',
  answers: { 200: ref('Webhook') },
  errors: [...KEYED_ERRORS, 'webhook_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params, actor }, { webhooks }) => ok(presentWebhook(await webhooks.deleteWebhook(scope, params.id, actor))),
});

/** A Chatwoot inbox as the API names its fields. */
function chatwootInput(given: { account_id: number; inbox_id: number; api_access_token?: string; number?: string | null }) {
  return {
    accountId: given.account_id,
    inboxId: given.inbox_id,
    ...(given.api_access_token !== undefined && { apiAccessToken: given.api_access_token }),
    ...(given.number !== undefined && { number: given.number }),
  };
}
