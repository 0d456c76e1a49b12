import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone } from './group-number.ts';
import { fromPhoneQuery, GROUP_ERRORS, groupSchema, presentGroup } from './group-requests.ts';

export const getGroup = defineSessionOperation(
  { params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, query: fromPhoneQuery },
  ['groups'],
)({
  method: 'GET',
  scope: 'read',
  path: '/groups/:id',
  operationId: 'getGroup',
  summary: 'Get a group with its participants',
  description:
    'One group from_phone is in: its participants by phone (with their LID where WhatsApp gives one, and the LID alone when it gives no ' +
    'phone) and their roles. A group the number is not in is not found.',
  tag: 'groups',
  answers: { 200: groupSchema },
  errors: [...GROUP_ERRORS, 'group_not_found'],
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ params, number }, services) => {
    return ok(presentGroup(await services.groups.get(number, params.id), number));
  },
});
