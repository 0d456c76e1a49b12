import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone } from './group-number.ts';
import { fromPhoneBody, groupIdParams, groupSchema, ONE_GROUP_ERRORS, presentGroup } from './group-requests.ts';

export const updateGroup = defineSessionOperation(
  {
    params: groupIdParams,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone'],
      properties: {
        ...fromPhoneBody,
        subject: { type: 'string', description: '1 to 100 characters.' },
        description: { type: ['string', 'null'], description: 'Up to 2,048 characters; empty or null clears it.' },
      },
    },
  },
  ['groups'],
)({
  method: 'PATCH',
  scope: 'send',
  path: '/groups/:id',
  operationId: 'updateGroup',
  summary: "Change a group's subject or description",
  description: 'from_phone must be an admin. An empty or null description clears it. Answers the group as it is now.',
  tag: 'groups',
  answers: { 200: groupSchema },
  errors: ONE_GROUP_ERRORS,
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ params, body, number }, services) => {
    return ok(presentGroup(await services.groups.changeSettings(number, params.id, body), number));
  },
});
