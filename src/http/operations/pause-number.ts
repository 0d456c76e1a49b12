import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { numberSchema, presentNumber, unknownNumberId } from './number-schema.ts';
import { defineSessionOperation, ok } from './operation.ts';

/** {id} of the numbers' operations: a number_id or a phone. */
export const numberIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The number_id, or the phone in E.164.' } },
} as const;

export const pauseNumber = defineSessionOperation(
  {
    params: numberIdParams,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        reason: { type: 'string', maxLength: 500, description: "Why, in your words; shown as the pause's detail in number.paused." },
      },
    },
  },
  ['numbers', 'pauses'],
)({
  method: 'POST',
  scope: 'send',
  path: '/numbers/:id/pause',
  operationId: 'pauseNumber',
  summary: 'Pause a number: hold its sends until it is resumed',
  description:
    'Sends from a paused number are refused with 503 number_paused (nothing is sent) until POST /numbers/{id}/resume; a number with a ' +
    'send policy queues them instead (202, wait_reason paused, scheduled_for null) and sends them once it resumes. A number.paused ' +
    'event with reason "manual" tells your webhooks. Use it after a ban, before moving to another number. Pausing a number WhatsApp ' +
    "already paused makes it wait for a resume by hand. Answers the number. Another account's number is not found.",
  tag: 'numbers',
  answers: { 200: numberSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'number_not_found', 'number_not_connected'],
  owner: ({ scope, params }, { numbers }) => numbers.findNumber(scope, params.id).catch(unknownNumberId),
  handle: async ({ body, number, actor }, { pauses }) => {
    const pause = await pauses.pause(number, body?.reason?.trim() || null, actor);
    return ok(presentNumber(number, pause));
  },
});
