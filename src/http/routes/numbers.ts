import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import { FOR_API_CLIENTS } from '../caller-constraint.ts';
import { apiKeyAuthHook, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponses } from '../schemas.ts';

const bearer = [{ apiKey: [] }];

const numberSchema = {
  type: 'object',
  required: ['number_id', 'phone', 'engine', 'status', 'status_reason', 'can_send', 'auto_read', 'created_at'],
  properties: {
    number_id: { type: 'string' },
    phone: { type: 'string', description: 'E.164: what from_phone names.' },
    engine: { type: 'string', enum: ['sandbox', 'baileys'], description: 'sandbox numbers live on the simulated network; baileys ones are real WhatsApp numbers.' },
    status: { type: 'string', description: 'The WhatsApp session\'s state, as its node last recorded it: connected, connecting, disconnected, logged_out, link_expired, conflict, failed or not_linked.' },
    status_reason: { type: ['string', 'null'], description: 'Why, when there is more to say.' },
    can_send: { type: 'boolean', description: 'Whether a send from this number would be handed to WhatsApp now (status connected).' },
    auto_read: { type: 'boolean', description: 'Whether messages it receives are marked read as soon as they are stored (PATCH /numbers/{id}).' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** GET /numbers, at both paths: the account's numbers and whether each can send, checked before sending. */
export function registerNumberRoutes(app: FastifyInstance, gateway: Gateway): void {
  const onRequest = apiKeyAuthHook(gateway.authenticator);
  for (const [url, operationId, options] of [['/numbers', 'listNumbers', FOR_API_CLIENTS], ['/api/numbers', 'listNumbersApi', {}]] as const) {
    app.get(
      url,
      {
        ...options,
        onRequest,
        schema: {
          operationId,
          summary: 'List your numbers and their session status',
          description:
            'Every number of the account, with its WhatsApp session\'s status, so a client can check before sending. /numbers and /api/numbers are the same operation; /numbers answers the API only with an Authorization header (without one it is the dashboard\'s page).',
          tags: ['numbers'],
          security: bearer,
          response: { 200: { type: 'object', required: ['numbers'], properties: { numbers: { type: 'array', items: numberSchema } } }, ...errorResponses(401, 500) },
        },
      },
      async (request) => ({ numbers: (await gateway.numbers.listNumbers(keyScope(request))).map(presentNumber) }),
    );
  }

  for (const [url, operationId] of [['/numbers/:id', 'updateNumber'], ['/api/numbers/:id', 'updateNumberApi']] as const) {
    app.patch<{ Params: { id: string }; Body: { auto_read: boolean } }>(
      url,
      {
        onRequest,
        schema: {
          operationId,
          summary: 'Change a number\'s settings',
          description:
            'auto_read: mark every message the number receives as read as soon as it is stored, as a person reading at once would (the sender sees blue ticks). {id} is the number\'s phone (E.164, + encoded as %2B or left as it is) or its number_id. Another account\'s number is not found.',
          tags: ['numbers'],
          security: bearer,
          params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The number_id, or the phone in E.164.' } } },
          body: { type: 'object', additionalProperties: false, required: ['auto_read'], properties: { auto_read: { type: 'boolean' } } },
          response: { 200: numberSchema, ...errorResponses(400, 401, 404, 500) },
        },
      },
      async (request) => presentNumber(await gateway.numbers.setAutoRead(keyScope(request), request.params.id, request.body.auto_read)),
    );
  }
}

function presentNumber(number: WhatsAppNumber) {
  return {
    number_id: number.id,
    phone: number.phone,
    engine: number.engine,
    status: number.status,
    status_reason: number.statusReason,
    can_send: number.status === 'connected',
    auto_read: number.autoRead,
    created_at: number.createdAt.toISOString(),
  };
}
