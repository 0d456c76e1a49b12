import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { AppError } from '../../domain/errors.ts';
import { assertSendableText } from '../../domain/message-text.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import { isOneEmoji } from '../../domain/emoji.ts';
import { parsePhoneField } from '../message-input.ts';
import { apiKeyAuthHook, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponses } from '../schemas.ts';
import { presentPage } from './message-reads.ts';
import { storedMessageSchema } from './message-read-schemas.ts';
import { notOwned, onNumberOwner, type OwnerAnswer } from './owner-calls.ts';

const bearer = [{ apiKey: [] }];

/** One of the four actions, as the public routes take it and as a node forwards it to the number's owner. */
export type ActionRequest =
  | { action: 'react'; message_id: string; from_phone: string; emoji: string }
  | { action: 'edit'; message_id: string; message: string }
  | { action: 'revoke'; message_id: string }
  | { action: 'read'; message_id: string };

const reactionRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'message_id', 'emoji'],
  properties: {
    from_phone: { type: 'string', description: 'The number whose chat holds the message.' },
    message_id: { type: 'string', description: 'The message to react to, sent or received.' },
    emoji: { type: 'string', description: 'Exactly one emoji by Unicode\'s emoji rules (skin tones, ZWJ sequences, flags and keycaps included); an empty string takes your reaction away.', examples: ['👍'] },
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

const readResponseSchema = {
  type: 'object',
  required: ['message_id', 'marked_read', 'read_at'],
  properties: {
    message_id: { type: 'string' },
    marked_read: { type: 'array', items: { type: 'string' }, description: 'The messages now marked read, oldest first: this one and the unread ones before it from the same sender (at most 100). Empty when all were read already.' },
    read_at: { type: 'string', format: 'date-time' },
  },
} as const;

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;

/** Runs an action where the number's session is: the message's own number, or from_phone for a reaction. */
export async function actionHere(gateway: Gateway, scope: AccountScope, request: ActionRequest): Promise<OwnerAnswer> {
  const actions = gateway.messageActions;
  const { message, number } = await actions.locate(scope, request.message_id);
  if (request.action === 'react') {
    const fromPhone = parsePhoneField(request.from_phone, 'from_phone');
    const from = await gateway.numbers.findNumber(scope, fromPhone).catch(notOwned);
    const { reactedAt } = await actions.react(from, message, request.emoji);
    return { statusCode: 200, body: { message_id: message.id, from_phone: from.phone, emoji: request.emoji, removed: request.emoji === '', reacted_at: reactedAt.toISOString() } };
  }
  if (number === undefined) throw new AppError('message_not_in_chat', `Message ${message.id} belongs to a number that is no longer on this gateway.`, { field: 'id' });
  if (request.action === 'read') {
    const at = new Date();
    const marked = await actions.markRead(number, message);
    return { statusCode: 200, body: { message_id: message.id, marked_read: marked.map((each) => each.id), read_at: (marked.at(-1)?.times?.read ?? at).toISOString() } };
  }
  const changed = request.action === 'edit' ? await actions.edit(number, message, request.message) : await actions.revoke(number, message);
  const [presented] = await presentPage(gateway, scope, [await gateway.history.find(scope, changed.id)]);
  return { statusCode: 200, body: presented };
}

/**
 * Finds where the action must run: the node serving from_phone for a reaction, the one serving
 * the message's number otherwise. A message of another account is a 404 before anything else.
 */
async function routeAction(gateway: Gateway, scope: AccountScope, request: ActionRequest): Promise<OwnerAnswer> {
  const here = () => actionHere(gateway, scope, request);
  if (request.action === 'react') return onNumberOwner(gateway, scope, parsePhoneField(request.from_phone, 'from_phone'), here, '/internal/message_action', request);
  const { number } = await gateway.messageActions.locate(scope, request.message_id);
  if (number === undefined) return here();
  return onNumberOwner(gateway, scope, number.phone, here, '/internal/message_action', request);
}

/** POST /send_reaction and /messages/{id}/edit, /revoke and /read, each also under /api. */
export function registerMessageActionRoutes(app: FastifyInstance, gateway: Gateway): void {
  const onRequest = apiKeyAuthHook(gateway.authenticator);
  const answer = async (scope: AccountScope, request: ActionRequest, reply: { status(code: number): { send(body: unknown): unknown } }) => {
    const outcome = await routeAction(gateway, scope, request);
    return reply.status(outcome.statusCode).send(outcome.body);
  };

  for (const [prefix, suffix] of [['', ''], ['/api', 'Api']] as const) {
    app.post<{ Body: { from_phone: string; message_id: string; emoji: string } }>(
      `${prefix}/send_reaction`,
      {
        onRequest,
        schema: {
          operationId: `sendReaction${suffix}`,
          summary: 'React to a message, or take the reaction away',
          description: 'Reacts with one emoji to a message in a chat of from_phone, as its sender sees on WhatsApp; a new reaction replaces the last, and an empty emoji removes it. /send_reaction and /api/send_reaction are the same operation.',
          tags: ['messages'],
          security: bearer,
          body: reactionRequestSchema,
          response: { 200: reactionResponseSchema, ...errorResponses(400, 401, 403, 404, 500, 503) },
        },
      },
      async (request, reply) => {
        const { emoji } = request.body;
        if (emoji !== '' && !isOneEmoji(emoji)) throw new AppError('invalid_emoji', 'emoji must be exactly one emoji, or empty to remove your reaction.', { field: 'emoji' });
        return answer(keyScope(request), { action: 'react', ...request.body }, reply);
      },
    );

    app.post<{ Params: { id: string }; Body: { message: string } }>(
      `${prefix}/messages/:id/edit`,
      {
        onRequest,
        schema: {
          operationId: `editMessage${suffix}`,
          summary: 'Edit a message you sent',
          description: 'Replaces the text (or caption) of a message you sent, within WhatsApp\'s 15 minutes of sending; the recipient sees it marked edited. The text it had is kept in the message\'s revisions. Answers the message as it is now.',
          tags: ['messages'],
          security: bearer,
          params: idParams,
          body: { type: 'object', additionalProperties: false, required: ['message'], properties: { message: { type: 'string', description: 'The new text.' } } },
          response: { 200: storedMessageSchema, ...errorResponses(400, 401, 404, 409, 500, 503) },
        },
      },
      async (request, reply) => {
        assertSendableText(request.body.message, gateway.config.maxMessageLength);
        return answer(keyScope(request), { action: 'edit', message_id: request.params.id, message: request.body.message }, reply);
      },
    );

    for (const [action, summary, description] of [
      ['revoke', 'Delete a message you sent, for everyone', 'Deletes a message you sent from the chat on both sides, within WhatsApp\'s window (about 60 hours). Its text is kept in the message\'s revisions. Answers the message as it is now.'],
      ['read', 'Mark a received message read', 'Marks a received message, and the unread ones before it from the same sender, read: the sender sees blue ticks (if both sides show read receipts). Answers which messages were marked.'],
    ] as const) {
      app.post<{ Params: { id: string } }>(
        `${prefix}/messages/:id/${action}`,
        {
          onRequest,
          schema: {
            operationId: `${action === 'revoke' ? 'revokeMessage' : 'markMessageRead'}${suffix}`,
            summary,
            description,
            tags: ['messages'],
            security: bearer,
            params: idParams,
            response: { 200: action === 'revoke' ? storedMessageSchema : readResponseSchema, ...errorResponses(400, 401, 404, 409, 500, 503) },
          },
        },
        async (request, reply) => answer(keyScope(request), { action, message_id: request.params.id }, reply),
      );
    }
  }
}
