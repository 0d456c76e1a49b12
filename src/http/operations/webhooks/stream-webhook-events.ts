import { FOR_API_CLIENTS } from '../../caller-constraint.ts';
import { KEYED_ERRORS } from '../error-responses.ts';
import { defineOperation, ok } from '../operation.ts';
import { webhookParams } from './webhook-resource-schemas.ts';

const streamQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    last_event_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The event_id of the last frame the client saw: the stream sends again what it sent after that, and nothing before.',
    },
  },
} as const;

/**
 * An event stream (docs/adr/0068-event-streams.md). With a WebSocket Upgrade, the path is the
 * stream itself, which src/http/event-stream-upgrade.ts accepts beside the routes with the same
 * checks; as a plain GET it is this operation, which says how far the stream has got, so that the
 * path is in the document, the typed client and the walks of every operation.
 */
export const streamWebhookEvents = defineOperation({ params: webhookParams, query: streamQuery }, ['webhooks'])({
  method: 'GET',
  scope: 'webhooks',
  path: '/webhooks/:id/stream',
  operationId: 'streamWebhookEvents',
  summary: 'An event stream: its events over a WebSocket, or how far it has got',
  description:
    'With a WebSocket client (Upgrade: websocket) and the Authorization header of a key with the webhooks scope, this is the ' +
    'stream: each text frame is one event, its webhook body (the `webhooks` section of this document) with `event_id` first, in ' +
    'the order the events happened, as they commit, on whichever node you reach. Reconnect with `last_event_id` to be sent what ' +
    'followed it, and nothing twice. The stream takes no messages. It closes with 4401 when the key is revoked, 4404 when the ' +
    'stream is deleted, 4409 when another connection takes it, 4410 when last_event_id is not one it sent (or is past the ' +
    'delivery log), 1001 when the node restarts, 1011 on a database failure. Without an Upgrade it answers how many events the ' +
    'stream has sent and how many wait for its client.',
  tag: 'webhooks',
  answers: {
    200: {
      type: 'object',
      required: ['webhook_id', 'sent', 'waiting'],
      properties: {
        webhook_id: { type: 'string' },
        sent: { type: 'integer', description: 'Events the stream has sent since it was made.' },
        waiting: { type: 'integer', description: 'Events committed and not yet sent: what a client connecting now is sent first.' },
      },
    },
  },
  errors: [...KEYED_ERRORS, 'webhook_not_found', 'not_an_event_stream'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params }, { webhooks }) => {
    const progress = await webhooks.streamProgress(scope, params.id);
    return ok({ webhook_id: progress.webhook.id, sent: progress.sent, waiting: progress.waiting });
  },
});
