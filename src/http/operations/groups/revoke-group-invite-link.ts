import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone, inviteLinkAnswer } from './group-number.ts';
import { fromPhoneBody, groupIdParams, inviteLinkSchema, ONE_GROUP_ERRORS } from './group-requests.ts';

export const revokeGroupInviteLink = defineSessionOperation(
  { params: groupIdParams, body: { type: 'object', additionalProperties: false, required: ['from_phone'], properties: fromPhoneBody } },
  ['groups'],
)({
  method: 'POST',
  scope: 'send',
  path: '/groups/:id/invite_link/revoke',
  operationId: 'revokeGroupInviteLink',
  summary: "Revoke a group's invite link",
  description: 'from_phone must be an admin. The old link stops working; answers the new one.',
  tag: 'groups',
  answers: { 200: inviteLinkSchema },
  errors: ONE_GROUP_ERRORS,
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ params, number }, services) => ok(await inviteLinkAnswer(services, number, params.id, true)),
});
