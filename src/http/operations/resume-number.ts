import { FOR_API_CLIENTS } from '../caller-constraint.ts';
import { KEYED_ERRORS } from './error-responses.ts';
import { numberSchema, presentNumber, unknownNumberId } from './number-schema.ts';
import { defineSessionOperation, ok } from './operation.ts';
import { numberIdParams } from './pause-number.ts';

export const resumeNumber = defineSessionOperation({ params: numberIdParams }, ['numbers', 'pauses'])({
  method: 'POST',
  scope: 'send',
  path: '/numbers/:id/resume',
  operationId: 'resumeNumber',
  summary: 'Resume a paused number',
  description:
    "Ends the number's pause, whatever paused it (WhatsApp or a person), and its sends go to WhatsApp again; a number.resumed event with " +
    'reason "manual" tells your webhooks. Resume a number WhatsApp restricted only once it is lifted: sending into a restriction ' +
    "deepens it. A number that is not paused is answered as it is. Answers the number. Another account's number is not found. " +
    "/numbers/{id}/resume answers the API only with an Authorization header (without one it is the dashboard's form).",
  tag: 'numbers',
  answers: { 200: numberSchema },
  errors: [...KEYED_ERRORS, 'number_not_found', 'number_not_connected'],
  // The dashboard's numbers page has its own Resume form at the same path.
  unprefixedRouteOptions: FOR_API_CLIENTS,
  owner: ({ scope, params }, { numbers }) => numbers.findNumber(scope, params.id).catch(unknownNumberId),
  handle: async ({ number, actor }, { pauses }) => {
    await pauses.resume(number, actor);
    return ok(presentNumber(number, undefined));
  },
});
