import { storedMessageSchema } from './message-read-schemas.ts';
import { KEYED_ERRORS } from './error-responses.ts';
import { locateOnItsNumber, messageIdParams, messageOwner, presentChanged } from './message-actions.ts';
import { defineOperation, ok } from './operation.ts';

export const cancelMessage = defineOperation({ params: messageIdParams }, [
  'messageActions',
  'history',
  'media',
  'mediaLinks',
  'sendQueues',
])({
  method: 'POST',
  scope: 'send',
  path: '/messages/:id/cancel',
  operationId: 'cancelMessage',
  summary: 'Cancel a queued or scheduled message',
  description:
    "A message waiting in its number's send queue (answered 202 `queued`) becomes `cancelled` and is never sent; its unit of quota is " +
    'given back and a message.status event reports it. A message that has left the queue cannot be cancelled (409 ' +
    'message_not_cancellable).',
  tag: 'messages',
  answers: { 200: storedMessageSchema },
  errors: [...KEYED_ERRORS, 'message_not_found', 'message_not_in_chat', 'message_not_cancellable', 'number_not_connected'],
  owner: ({ scope, params }, services) => messageOwner(services, scope, params.id),
  handle: async ({ scope, params }, services) => {
    const { message, number } = await locateOnItsNumber(services, scope, params.id);
    return ok(await presentChanged(services, scope, await services.sendQueues.cancel(number, message)));
  },
});
