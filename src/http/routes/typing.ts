import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { AppError } from '../../domain/errors.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import type { ChatPresence } from '../../engines/engine.ts';
import { parsePhoneField } from '../message-input.ts';
import { apiKeyAuthHook, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponses } from '../schemas.ts';
import { notOwned, onNumberOwner, type OwnerAnswer } from './owner-calls.ts';

const bearer = [{ apiKey: [] }];
const STATES: readonly ChatPresence[] = ['composing', 'recording', 'paused'];

export interface TypingBody {
  from_phone: string;
  to_phone: string;
  state: string;
}

const typingRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'to_phone', 'state'],
  properties: {
    from_phone: { type: 'string', description: 'One of your numbers.' },
    to_phone: { type: 'string', description: 'The chat that sees it.' },
    state: { type: 'string', enum: STATES, description: 'composing ("typing…"), recording ("recording audio…") or paused (neither).' },
  },
} as const;

const typingResponseSchema = {
  type: 'object',
  required: ['from_phone', 'to_phone', 'state', 'ends_at'],
  properties: {
    from_phone: { type: 'string' },
    to_phone: { type: 'string' },
    state: { type: 'string', enum: STATES },
    ends_at: { type: ['string', 'null'], format: 'date-time', description: 'When the state ends by itself unless renewed; null for paused.' },
  },
} as const;

/** Shows the state where from_phone's session runs. */
export async function typingHere(gateway: Gateway, scope: AccountScope, body: TypingBody): Promise<OwnerAnswer> {
  const { fromPhone, toPhone, state } = parseTyping(body);
  const number = await gateway.numbers.findNumber(scope, fromPhone).catch(notOwned);
  const endsAt = await gateway.typing.show(number, toPhone, state);
  return { statusCode: 200, body: { from_phone: fromPhone, to_phone: toPhone, state, ends_at: endsAt?.toISOString() ?? null } };
}

function parseTyping(body: TypingBody) {
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  const toPhone = parsePhoneField(body.to_phone, 'to_phone');
  if (!(STATES as readonly string[]).includes(body.state)) throw new AppError('invalid_request', `state must be one of ${STATES.join(', ')}.`, { field: 'state' });
  return { fromPhone, toPhone, state: body.state as ChatPresence };
}

/** POST /typing and its /api alias. */
export function registerTypingRoutes(app: FastifyInstance, gateway: Gateway): void {
  const onRequest = apiKeyAuthHook(gateway.authenticator);
  for (const [url, operationId] of [['/typing', 'showTyping'], ['/api/typing', 'showTypingApi']] as const) {
    app.post<{ Body: TypingBody }>(
      url,
      {
        onRequest,
        schema: {
          operationId,
          summary: 'Show "typing…" or "recording audio…" to a chat',
          description:
            'Shows the state to the chat with to_phone, as WhatsApp does while a person types. composing and recording end by themselves after WAGW_TYPING_SECONDS (25 by default) unless sent again; paused ends them at once. /typing and /api/typing are the same operation.',
          tags: ['messages'],
          security: bearer,
          body: typingRequestSchema,
          response: { 200: typingResponseSchema, ...errorResponses(400, 401, 403, 500, 503) },
        },
      },
      async (request, reply) => {
        const scope = keyScope(request);
        const { fromPhone } = parseTyping(request.body);
        const answer = await onNumberOwner(gateway, scope, fromPhone, () => typingHere(gateway, scope, request.body), '/internal/typing', request.body);
        return reply.status(answer.statusCode).send(answer.body);
      },
    );
  }
}
