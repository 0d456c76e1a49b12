import { AppError } from '../../../domain/errors.ts';
import { FOR_API_CLIENTS } from '../../caller-constraint.ts';
import { KEYED_ERRORS } from '../error-responses.ts';
import { defineOperation } from '../operation.ts';
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
 * An event stream's WebSocket (docs/adr/0068-event-streams.md). The connection itself is an
 * Upgrade, which src/http/event-stream-upgrade.ts accepts beside the routes with the same checks;
 * this operation is the path as a plain GET reaches it, so that it is in the document, the typed
 * client and the walks of every operation, and says how to connect.
 */
export const streamWebhookEvents = defineOperation({ params: webhookParams, query: streamQuery }, ['webhooks'])({
  method: 'GET',
  scope: 'webhooks',
  path: '/webhooks/:id/stream',
  operationId: 'streamWebhookEvents',
  summary: "Read an event stream's events over a WebSocket",
  description:
    'Connect with a WebSocket client (Upgrade: websocket) and the Authorization header of a key with the webhooks scope. Each text ' +
    'frame is one event: its webhook body (the `webhooks` section of this document) with `event_id` first, in the order the events ' +
    'happened, as they commit, on whichever node you reach. Reconnect with `last_event_id` to be sent what followed it, and nothing ' +
    'twice. The stream takes no messages. It closes with 4401 when the key is revoked, 4404 when the stream is deleted, 4409 when ' +
    'another connection takes it, 4410 when last_event_id is not one ' +
    'it sent (or is past the delivery log), 1001 when the node restarts, 1011 on a database failure. A plain GET answers 426.',
  tag: 'webhooks',
  answers: {},
  errors: [...KEYED_ERRORS, 'webhook_not_found', 'not_an_event_stream', 'upgrade_required'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, params }, { webhooks }) => {
    await webhooks.getStream(scope, params.id);
    throw new AppError('upgrade_required', `Connect to ${params.id}'s stream with a WebSocket client (Upgrade: websocket).`);
  },
});
