import { FOR_API_CLIENTS } from '../caller-constraint.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { listMessagesQuerySchema, messagePageSchema } from './message-read-schemas.ts';
import { presentPage, readListQuery } from './message-presenting.ts';
import { defineOperation, ok } from './operation.ts';

export const listMessages = defineOperation({ query: listMessagesQuerySchema }, ['numbers', 'history', 'media', 'mediaLinks'])({
  method: 'GET',
  scope: 'read',
  path: '/messages',
  operationId: 'listMessages',
  summary: 'List sent and received messages',
  description:
    "The account's messages, newest first, a page at a time: pass next_cursor as cursor for the next page. Filters combine. /messages " +
    'and /api/messages are the same operation; /messages answers the API only with an Authorization header (without one it is the ' +
    "dashboard's page).",
  tag: 'messages',
  answers: { 200: messagePageSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'invalid_phone_number', 'number_not_found'],
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope, query }, services) => {
    const page = await services.history.page(scope, await readListQuery(services, scope, query));
    return ok({ messages: await presentPage(services, scope, page.messages), next_cursor: page.nextCursor ?? null });
  },
});
