import { KEYED_ERRORS } from './error-responses.ts';
import { messageDetailSchema } from './message-read-schemas.ts';
import { presentDetail } from './message-presenting.ts';
import { messageIdParams } from './message-actions.ts';
import { defineOperation, ok } from './operation.ts';

export const getMessage = defineOperation({ params: messageIdParams }, ['history', 'media', 'mediaLinks', 'polls'])({
  method: 'GET',
  scope: 'read',
  path: '/messages/:id',
  operationId: 'getMessage',
  summary: 'Get one message',
  description:
    'One message of the account, sent or received, with its status history, the reactions on it and the texts it had before an edit or ' +
    "its revocation, and for a poll its tally (each voter's current selection, counted). Another account's message is not found, like " +
    'an unknown id. /messages/{id} and /api/messages/{id} are the same operation.',
  tag: 'messages',
  answers: { 200: messageDetailSchema },
  errors: [...KEYED_ERRORS, 'message_not_found'],
  handle: async ({ scope, params }, services) => ok(await presentDetail(services, scope, await services.history.find(scope, params.id))),
});
