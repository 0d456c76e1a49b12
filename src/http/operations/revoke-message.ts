import { storedMessageSchema } from './message-read-schemas.ts';
import { locateOnItsNumber, MESSAGE_ACTION_ERRORS, messageIdParams, messageOwner, presentChanged } from './message-actions.ts';
import { defineOperation, ok } from './operation.ts';

export const revokeMessage = defineOperation({ params: messageIdParams }, ['messageActions', 'history', 'media', 'mediaLinks'])({
  method: 'POST',
  scope: 'send',
  path: '/messages/:id/revoke',
  operationId: 'revokeMessage',
  summary: 'Delete a message you sent, for everyone',
  description:
    "Deletes a message you sent from the chat on both sides, within WhatsApp's window (about 60 hours). Its text is kept in the " +
    "message's revisions. Answers the message as it is now.",
  tag: 'messages',
  answers: { 200: storedMessageSchema },
  errors: MESSAGE_ACTION_ERRORS,
  owner: ({ scope, params }, services) => messageOwner(services, scope, params.id),
  handle: async ({ scope, params }, services) => {
    const { message, number } = await locateOnItsNumber(services, scope, params.id);
    return ok(await presentChanged(services, scope, await services.messageActions.revoke(number, message)));
  },
});
