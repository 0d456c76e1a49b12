import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import { FOR_API_CLIENTS } from '../caller-constraint.ts';
import { apiKeyAuthHook, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponses } from '../schemas.ts';

const bearer = [{ apiKey: [] }];

const numberSchema = {
  type: 'object',
  required: ['number_id', 'phone', 'engine', 'status', 'status_reason', 'can_send', 'created_at'],
  properties: {
    number_id: { type: 'string' },
    phone: { type: 'string', description: 'E.164: what from_phone names.' },
    engine: { type: 'string', enum: ['sandbox', 'baileys'], description: 'sandbox numbers live on the simulated network; baileys ones are real WhatsApp numbers.' },
    status: { type: 'string', description: 'The WhatsApp session\'s state, as its node last recorded it: connected, connecting, disconnected, logged_out, link_expired, conflict, failed or not_linked.' },
    status_reason: { type: ['string', 'null'], description: 'Why, when there is more to say.' },
    can_send: { type: 'boolean', description: 'Whether a send from this number would be handed to WhatsApp now (status connected).' },
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
}

function presentNumber(number: WhatsAppNumber) {
  return {
    number_id: number.id,
    phone: number.phone,
    engine: number.engine,
    status: number.status,
    status_reason: number.statusReason,
    can_send: number.status === 'connected',
    created_at: number.createdAt.toISOString(),
  };
}
