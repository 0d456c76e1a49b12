import { unknownNumberId } from './number-schema.ts';
import { ref } from '../schema-refs.ts';
import { pageOffsetParameter } from '../schemas.ts';
import { presentQueue } from '../send-policy-schemas.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { defineOperation, defineSessionOperation, ok } from './operation.ts';

const numberParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The number_id, or the phone in E.164.' } },
} as const;
const DEFAULT_PAGE = 50;

export const getNumberQueue = defineOperation(
  {
    params: numberParams,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 500,
          default: DEFAULT_PAGE,
          description: 'Messages per page (1 to 500, 50 by default).',
        },
        cursor: { type: 'string', maxLength: 128, description: 'The next_cursor of the previous page.' },
        offset: pageOffsetParameter,
      },
    },
  },
  ['numbers', 'sendQueues'],
)({
  method: 'GET',
  scope: 'read',
  path: '/numbers/:id/queue',
  operationId: 'getNumberQueue',
  summary: "A number's send queue",
  description:
    'The messages the send governor keeps waiting for this number (docs/send-governor.md), in the order they are due to leave, with ' +
    'counts by the reason they wait, the next time one leaves, and the policy in force.',
  tag: 'numbers',
  answers: { 200: ref('NumberQueue') },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'number_not_found'],
  handle: async ({ scope, params, query }, { numbers, sendQueues }) => {
    const number = await numbers.findNumber(scope, params.id).catch(unknownNumberId);
    return ok(presentQueue(number, await sendQueues.view(number, query.limit ?? DEFAULT_PAGE, query.cursor, query.offset ?? 0)));
  },
});

export const clearNumberQueue = defineSessionOperation({ params: numberParams }, ['numbers', 'sendQueues'])({
  method: 'DELETE',
  scope: 'send',
  path: '/numbers/:id/queue',
  operationId: 'clearNumberQueue',
  summary: "Cancel every message waiting in a number's queue",
  description:
    'Every waiting message becomes `cancelled` (a message.status event each) and its unit of quota is given back; none of them is sent. ' +
    'After a ban, do this before anything else, so that leftover messages never go out from a replacement number. A long queue is ' +
    'answered 202 at once, its cancellations settled in the background (docs/send-governor.md).',
  tag: 'numbers',
  answers: {
    200: clearedQueueSchema('Every waiting message is cancelled, its event written and its unit given back.'),
    202: clearedQueueSchema(
      'Every waiting message is cancelled and none of them will be sent; `pending` of them are still being settled (their events and ' +
        'units follow), which GET /numbers/{id}/queue shows under the wait reason `cancelling`.',
    ),
  },
  errors: [...KEYED_ERRORS, 'number_not_found', 'number_not_connected'],
  owner: ({ scope, params }, { numbers }) => numbers.findNumber(scope, params.id).catch(unknownNumberId),
  handle: async ({ number, actor }, { sendQueues }) => {
    const { cancelled, pending } = await sendQueues.clear(number, actor);
    return { statusCode: pending === 0 ? 200 : 202, body: { number_id: number.id, cancelled, pending } };
  },
});

/** The answer to a clear: 200 when it is wholly settled, 202 while the queue runner settles the rest. */
export function clearedQueueSchema(description: string) {
  return {
    type: 'object',
    description,
    required: ['number_id', 'cancelled', 'pending'],
    properties: {
      number_id: { type: 'string' },
      cancelled: { type: 'integer', description: 'Messages cancelled: none of them will be sent.' },
      pending: {
        type: 'integer',
        description: 'Of those, how many are still being settled (their message.status event and unit of quota).',
      },
    },
  } as const;
}
