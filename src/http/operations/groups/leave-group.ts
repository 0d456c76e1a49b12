import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone } from './group-number.ts';
import { fromPhoneBody, groupIdParams, ONE_GROUP_ERRORS } from './group-requests.ts';

export const leaveGroup = defineSessionOperation(
  { params: groupIdParams, body: { type: 'object', additionalProperties: false, required: ['from_phone'], properties: fromPhoneBody } },
  ['groups'],
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
  handle: async ({ params, number }, services) => {
    await services.groups.leave(number, params.id);
    return ok({ group_id: params.id, left: true });
  },
});
