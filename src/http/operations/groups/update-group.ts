import { defineOperation, ok } from '../operation.ts';
import { fromPhone, groupNumber } from './group-number.ts';
import { fromPhoneBody, groupIdParams, groupSchema, ONE_GROUP_ERRORS, presentGroup } from './group-requests.ts';

export const updateGroup = defineOperation(
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
  ['numbers', 'groups'],
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
  handle: async ({ scope, params, body }, services) => {
    const number = await groupNumber(services, scope, body.from_phone);
    return ok(presentGroup(await services.groups.changeSettings(number, params.id, body), number));
  },
});
