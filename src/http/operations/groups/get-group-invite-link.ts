import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone, inviteLinkAnswer } from './group-number.ts';
import { fromPhoneQuery, groupIdParams, inviteLinkSchema, ONE_GROUP_ERRORS } from './group-requests.ts';

export const getGroupInviteLink = defineSessionOperation({ params: groupIdParams, query: fromPhoneQuery }, ['groups'])({
  method: 'GET',
  scope: 'send',
  path: '/groups/:id/invite_link',
  operationId: 'getGroupInviteLink',
  summary: "Get a group's invite link",
  description: 'from_phone must be an admin. Whoever has the link may join the group, until it is revoked.',
  tag: 'groups',
  answers: { 200: inviteLinkSchema },
  errors: ONE_GROUP_ERRORS,
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ params, number }, services) => ok(await inviteLinkAnswer(services, number, params.id, false)),
});
