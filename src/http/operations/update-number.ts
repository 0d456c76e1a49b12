import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { numberSchema, presentNumber } from './number-schema.ts';
import { defineOperation, ok } from './operation.ts';

export const updateNumber = defineOperation({
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The number_id, or the phone in E.164.' } } },
  body: { type: 'object', additionalProperties: false, required: ['auto_read'], properties: { auto_read: { type: 'boolean' } } },
}, ['numbers', 'pauses'])({
  method: 'PATCH',
  path: '/numbers/:id',
  operationId: 'updateNumber',
  summary: 'Change a number\'s settings',
  description:
    'auto_read: mark every message the number receives as read as soon as it is stored, as a person reading at once would (the sender sees blue ticks). {id} is the number\'s phone (E.164, + encoded as %2B or left as it is) or its number_id. Another account\'s number is not found.',
  tag: 'numbers',
  answers: { 200: numberSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'number_not_found'],
  handle: async ({ scope, params, body }, { numbers, pauses }) => {
    const number = await numbers.setAutoRead(scope, params.id, body.auto_read);
    return ok(presentNumber(number, (await pauses.pausesOf([number.id])).get(number.id)));
  },
});
