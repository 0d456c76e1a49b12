import { AppError } from '../../domain/errors.ts';
import type { ChatPresence } from '../../engines/engine.ts';
import { parsePhoneField } from '../message-input.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { defineSessionOperation, ok } from './operation.ts';
import type { E164 } from '../../domain/phone.ts';

const STATES = ['composing', 'recording', 'paused'] as const satisfies readonly ChatPresence[];

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
    ends_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the state ends by itself unless renewed; null for paused.',
    },
  },
} as const;

function parseState(state: string): ChatPresence {
  if (!(STATES as readonly string[]).includes(state))
    throw new AppError('invalid_request', `state must be one of ${STATES.join(', ')}.`, { field: 'state' });
  return state as ChatPresence;
}

export const showTyping = defineSessionOperation({ body: typingRequestSchema }, ['typing']).reading<TypingCommand>()({
  method: 'POST',
  scope: 'send',
  path: '/typing',
  operationId: 'showTyping',
  summary: 'Show "typing…" or "recording audio…" to a chat',
  description:
    'Shows the state to the chat with to_phone, as WhatsApp does while a person types. composing and recording end by themselves after ' +
    'WAGW_TYPING_SECONDS (25 by default) unless sent again; paused ends them at once. /typing and /api/typing are the same operation.',
  tag: 'messages',
  answers: { 200: typingResponseSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  // Read once, in the order the fields are refused in.
  command: ({ body }) => ({
    fromPhone: parsePhoneField(body.from_phone, 'from_phone'),
    toPhone: parsePhoneField(body.to_phone, 'to_phone'),
    state: parseState(body.state),
  }),
  owner: ({ command }) => command.fromPhone,
  handle: async ({ command: { toPhone, state }, number }, { typing }) => {
    const endsAt = await typing.show(number, toPhone, state);
    return ok({ from_phone: number.phone, to_phone: toPhone, state, ends_at: endsAt?.toISOString() ?? null });
  },
});

/** The request as read, once. */
interface TypingCommand {
  fromPhone: E164;
  toPhone: E164;
  state: ChatPresence;
}
