import { AppError } from '../../domain/errors.ts';
import { isOneEmoji } from '../../domain/emoji.ts';
import { parsePhoneField } from '../message-input.ts';
import { MESSAGE_ACTION_ERRORS } from './message-actions.ts';
import { defineSessionOperation, ok } from './operation.ts';

const reactionRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'message_id', 'emoji'],
  properties: {
    from_phone: { type: 'string', description: 'The number whose chat holds the message.' },
    message_id: { type: 'string', description: 'The message to react to, sent or received.' },
    emoji: {
      type: 'string',
      description:
        "Exactly one emoji by Unicode's emoji rules (skin tones, ZWJ sequences, flags and keycaps included); an empty string takes your " +
        'reaction away.',
      examples: ['👍'],
    },
  },
} as const;

const reactionResponseSchema = {
  type: 'object',
  required: ['message_id', 'from_phone', 'emoji', 'removed', 'reacted_at'],
  properties: {
    message_id: { type: 'string' },
    from_phone: { type: 'string' },
    emoji: { type: 'string' },
    removed: { type: 'boolean', description: 'True when the empty emoji took the reaction away.' },
    reacted_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const sendReaction = defineSessionOperation({ body: reactionRequestSchema }, ['messageActions'])({
  method: 'POST',
  scope: 'send',
  path: '/send_reaction',
  operationId: 'sendReaction',
  summary: 'React to a message, or take the reaction away',
  description:
    'Reacts with one emoji to a message in a chat of from_phone, as its sender sees on WhatsApp; a new reaction replaces the last, and ' +
    'an empty emoji removes it. /send_reaction and /api/send_reaction are the same operation.',
  tag: 'messages',
  answers: { 200: reactionResponseSchema },
  errors: [...MESSAGE_ACTION_ERRORS, 'invalid_emoji', 'invalid_phone_number', 'phone_not_owned'],
  check: async ({ scope, body }, { messageActions }) => {
    if (body.emoji !== '' && !isOneEmoji(body.emoji))
      throw new AppError('invalid_emoji', 'emoji must be exactly one emoji, or empty to remove your reaction.', { field: 'emoji' });
    // The message is looked for before from_phone, on every node: another account's message is a
    // 404 whether or not from_phone is also another account's.
    await messageActions.locate(scope, body.message_id);
  },
  // A reaction is made by from_phone, whichever number the message belongs to.
  owner: ({ body }) => parsePhoneField(body.from_phone, 'from_phone'),
  handle: async ({ scope, body, number: from }, { messageActions }) => {
    const { message } = await messageActions.locate(scope, body.message_id);
    const { reactedAt } = await messageActions.react(from, message, body.emoji);
    return ok({
      message_id: message.id,
      from_phone: from.phone,
      emoji: body.emoji,
      removed: body.emoji === '',
      reacted_at: reactedAt.toISOString(),
    });
  },
});
