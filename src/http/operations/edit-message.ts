import { assertSendableText } from '../../domain/message-text.ts';
import { storedMessageSchema } from './message-read-schemas.ts';
import { locateOnItsNumber, MESSAGE_ACTION_ERRORS, messageIdParams, messageOwner, presentChanged } from './message-actions.ts';
import { defineOperation, ok } from './operation.ts';

export const editMessage = defineOperation(
  {
    params: messageIdParams,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['message'],
      properties: { message: { type: 'string', description: 'The new text.' } },
    },
  },
  ['messageActions', 'history', 'media', 'mediaLinks', 'maxMessageLength'],
)({
  method: 'POST',
  scope: 'send',
  path: '/messages/:id/edit',
  operationId: 'editMessage',
  summary: 'Edit a message you sent',
  description:
    "Replaces the text (or caption) of a message you sent, within WhatsApp's 15 minutes of sending; the recipient sees it marked edited. " +
    "The text it had is kept in the message's revisions. Answers the message as it is now.",
  tag: 'messages',
  answers: { 200: storedMessageSchema },
  errors: [...MESSAGE_ACTION_ERRORS, 'empty_message', 'message_too_long'],
  check: ({ body }, { maxMessageLength }) => assertSendableText(body.message, maxMessageLength),
  owner: ({ scope, params }, services) => messageOwner(services, scope, params.id),
  handle: async ({ scope, params, body }, services) => {
    const { message, number } = await locateOnItsNumber(services, scope, params.id);
    return ok(await presentChanged(services, scope, await services.messageActions.edit(number, message, body.message)));
  },
});
