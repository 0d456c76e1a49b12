import { FOR_API_CLIENTS } from '../../caller-constraint.ts';
import { ref } from '../../schema-refs.ts';
import { KEYED_ERRORS } from '../error-responses.ts';
import { defineOperation, ok } from '../operation.ts';
import { presentDelivery, webhookParams } from './webhook-resource-schemas.ts';

// What a key with the `webhooks` scope does with a webhook besides changing it: rotate its
// secret, send it a test event, read its deliveries and send one again. Each through the
// WebhooksService the dashboard uses, with its audit row.

const DEFAULT_DELIVERIES = 20;

export const rotateWebhookSecret = defineOperation({ params: webhookParams }, ['webhooks'])({
  method: 'POST',
  scope: 'webhooks',
  path: '/webhooks/:id/rotate_secret',
  operationId: 'rotateWebhookSecret',
  summary: "Rotate a webhook's signing secret",
  description:
    'Makes a new secret, shown in this answer only. For 24 hours deliveries are signed with both the new and the old one (two ' +
    'signatures in webhook-signature), so a receiver can switch over without refusing any.',
  tag: 'webhooks',
  answers: {
    200: {
      type: 'object',
      required: ['webhook_id', 'secret', 'previous_secret_valid_until'],
      properties: {
        webhook_id: { type: 'string' },
        secret: { type: 'string', description: 'The new signing secret, whsec_…; shown only now.' },
        previous_secret_valid_until: { type: 'string', format: 'date-time', description: 'Until when the old secret signs too.' },
      },
    },
  },
  errors: [...KEYED_ERRORS, 'webhook_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params, actor }, { webhooks }) => {
    const rotated = await webhooks.rotateSecret(scope, params.id, actor);
    return ok({
      webhook_id: rotated.webhook.id,
      secret: rotated.secret,
      previous_secret_valid_until: rotated.previousValidUntil.toISOString(),
    });
  },
});

export const testWebhook = defineOperation({ params: webhookParams }, ['webhooks'])({
  method: 'POST',
  scope: 'webhooks',
  path: '/webhooks/:id/test',
  operationId: 'testWebhook',
  summary: 'Send a webhook a test event',
  description:
    'Queues a signed `test` event for this webhook, delivered and retried like any other (its delivery is listed under deliveries), ' +
    'even when the webhook is not subscribed to it.',
  tag: 'webhooks',
  answers: {
    202: {
      type: 'object',
      required: ['webhook_id', 'event'],
      properties: { webhook_id: { type: 'string' }, event: { type: 'string', enum: ['test'] } },
    },
  },
  errors: [...KEYED_ERRORS, 'webhook_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params, actor }, { webhooks }) => {
    await webhooks.sendTestEvent(scope, params.id, actor);
    return { statusCode: 202, body: { webhook_id: params.id, event: 'test' } };
  },
});

export const listWebhookDeliveries = defineOperation(
  {
    params: webhookParams,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 100,
          default: DEFAULT_DELIVERIES,
          description: `How many, newest first (1 to 100, ${DEFAULT_DELIVERIES} by default).`,
        },
      },
    },
  },
  ['webhooks'],
)({
  method: 'GET',
  scope: 'webhooks',
  path: '/webhooks/:id/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: "A webhook's recent deliveries, with their attempts",
  description: 'The newest deliveries first, each with every attempt made: status code, time taken, the start of the answer, or the error.',
  tag: 'webhooks',
  answers: {
    200: { type: 'object', required: ['deliveries'], properties: { deliveries: { type: 'array', items: ref('WebhookDelivery') } } },
  },
  errors: [...KEYED_ERRORS, 'webhook_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params, query }, { webhooks }) =>
    ok({ deliveries: (await webhooks.listDeliveries(scope, params.id, query.limit ?? DEFAULT_DELIVERIES)).map(presentDelivery) }),
});

export const redeliverWebhookDelivery = defineOperation(
  {
    params: {
      type: 'object',
      required: ['id', 'deliveryId'],
      additionalProperties: false,
      properties: { ...webhookParams.properties, deliveryId: { type: 'string', maxLength: 64, description: 'The delivery, dlv_…' } },
    },
  },
  ['webhooks'],
)({
  method: 'POST',
  scope: 'webhooks',
  path: '/webhooks/:id/deliveries/:deliveryId/redeliver',
  operationId: 'redeliverWebhookDelivery',
  summary: 'Send a delivery again',
  description:
    'Sends the delivery again now, whatever its state, with the same webhook-id (so a receiver that kept it can tell a repeat), and ' +
    'answers it as it is now. A delivery of another webhook is not found through this one.',
  tag: 'webhooks',
  answers: { 202: ref('WebhookDelivery') },
  errors: [...KEYED_ERRORS, 'webhook_not_found', 'delivery_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params, actor }, { webhooks }) => {
    await webhooks.getWebhook(scope, params.id);
    await webhooks.redeliver(scope, params.deliveryId, params.id, actor);
    return { statusCode: 202, body: presentDelivery(await webhooks.getDelivery(scope, params.deliveryId)) };
  },
});
