import { defineOperation, ok } from '../operation.ts';
import { fromPhone, groupNumber } from './group-number.ts';
import { fromPhoneBody, groupIdParams, ONE_GROUP_ERRORS } from './group-requests.ts';

export const leaveGroup = defineOperation(
  { params: groupIdParams, body: { type: 'object', additionalProperties: false, required: ['from_phone'], properties: fromPhoneBody } },
  ['numbers', 'groups'],
)({
  method: 'POST',
  scope: 'send',
  path: '/groups/:id/leave',
  operationId: 'leaveGroup',
  summary: 'Leave a group',
  description: 'from_phone leaves the group. Its messages stay in your history; sending there again answers not_group_member.',
  tag: 'groups',
  answers: {
    200: { type: 'object', required: ['group_id', 'left'], properties: { group_id: { type: 'string' }, left: { type: 'boolean' } } },
  },
  errors: ONE_GROUP_ERRORS,
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ scope, params, body }, services) => {
    const number = await groupNumber(services, scope, body.from_phone);
    await services.groups.leave(number, params.id);
    return ok({ group_id: params.id, left: true });
  },
});
