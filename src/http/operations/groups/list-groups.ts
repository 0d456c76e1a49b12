import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone } from './group-number.ts';
import { fromPhoneQuery, GROUP_ERRORS, groupSummarySchema, presentGroupSummary } from './group-requests.ts';

export const listGroups = defineSessionOperation({ query: fromPhoneQuery }, ['groups'])({
  method: 'GET',
  scope: 'read',
  path: '/groups',
  operationId: 'listGroups',
  summary: 'List the groups a number belongs to',
  description: 'Every group from_phone is in, with its size and whether the number is an admin.',
  tag: 'groups',
  answers: { 200: { type: 'object', required: ['groups'], properties: { groups: { type: 'array', items: groupSummarySchema } } } },
  errors: GROUP_ERRORS,
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ number }, services) => {
    return ok({ groups: (await services.groups.list(number)).map((group) => presentGroupSummary(group, number)) });
  },
});
