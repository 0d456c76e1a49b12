import { FOR_API_CLIENTS } from '../caller-constraint.ts';
import { KEYED_ERRORS } from './error-responses.ts';
import { numberSchema, presentNumber } from './number-schema.ts';
import { defineOperation, ok } from './operation.ts';

export const listNumbers = defineOperation({}, ['numbers', 'pauses'])({
  method: 'GET',
  scope: 'read',
  path: '/numbers',
  operationId: 'listNumbers',
  summary: 'List your numbers and their session status',
  description:
    "Every number of the account, with its WhatsApp session's status and its pause, if any, so a client can check before sending. " +
    '/numbers and /api/numbers are the same operation; /numbers answers the API only with an Authorization header (without one it is ' +
    "the dashboard's page).",
  tag: 'numbers',
  answers: { 200: { type: 'object', required: ['numbers'], properties: { numbers: { type: 'array', items: numberSchema } } } },
  errors: KEYED_ERRORS,
  unprefixedRouteOptions: FOR_API_CLIENTS,
  handle: async ({ scope }, { numbers, pauses }) => {
    const listed = await numbers.listNumbers(scope);
    const paused = await pauses.pausesOf(listed.map((number) => number.id));
    return ok({ numbers: listed.map((number) => presentNumber(number, paused.get(number.id))) });
  },
});
