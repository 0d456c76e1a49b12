import { parseSettingInput } from '../../domain/send-policy.ts';
import { ref } from '../message-schemas.ts';
import { sendPolicySettingInput } from '../send-policy-schemas.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { numberSchema, presentNumber } from './number-schema.ts';
import { defineOperation, ok } from './operation.ts';

export const updateNumber = defineOperation({
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The number_id, or the phone in E.164.' } } },
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { auto_read: { type: 'boolean' }, send_policy: sendPolicySettingInput },
  },
}, ['numbers', 'sendQueues'])({
  method: 'PATCH',
  path: '/numbers/:id',
  operationId: 'updateNumber',
  summary: 'Change a number\'s settings',
  description:
    'auto_read: mark every message the number receives as read as soon as it is stored, as a person reading at once would (the sender sees blue ticks). send_policy: how the number\'s sends are paced (docs/send-governor.md): a preset, a policy of its own, or null to follow its account\'s. {id} is the number\'s phone (E.164, + encoded as %2B or left as it is) or its number_id. Another account\'s number is not found.',
  tag: 'numbers',
  answers: { 200: { ...numberSchema, properties: { ...numberSchema.properties, send_policy: ref('SendPolicySetting') } } },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'number_not_found', 'invalid_send_policy'],
  check: ({ body }) => {
    if (body.send_policy != null) parseSettingInput(body.send_policy, 'send_policy');
  },
  handle: async ({ scope, params, body }, { numbers, sendQueues }) => {
    let number = await numbers.findNumber(scope, params.id);
    if (body.auto_read !== undefined) number = await numbers.setAutoRead(scope, number.id, body.auto_read);
    const policy = body.send_policy === undefined
      ? await sendQueues.numberPolicy(number)
      : await sendQueues.setNumberPolicy(number, body.send_policy === null ? null : parseSettingInput(body.send_policy, 'send_policy'));
    return ok({ ...presentNumber(number), send_policy: policy });
  },
});
