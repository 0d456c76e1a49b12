import { defineSessionOperation } from '../operation.ts';
import { fromPhone } from './group-number.ts';
import { GROUP_ERRORS, groupSchema, presentGroup } from './group-requests.ts';

export const createGroup = defineSessionOperation(
  {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone', 'subject', 'participants'],
      properties: {
        from_phone: { type: 'string', description: "One of your numbers: the group's creator." },
        subject: { type: 'string', description: "The group's name, 1 to 100 characters." },
        participants: { type: 'array', items: { type: 'string' }, description: 'Phones to add, with their country code.' },
      },
    },
  },
  ['groups'],
)({
  method: 'POST',
  scope: 'send',
  path: '/groups',
  operationId: 'createGroup',
  summary: 'Create a group',
  description:
    'Creates a WhatsApp group with from_phone as its super admin and the participants added (up to 256; more can be added later). ' +
    'Answers 201 with the group and its id.',
  tag: 'groups',
  answers: { 201: groupSchema },
  errors: GROUP_ERRORS,
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ body, number }, services) => {
    return { statusCode: 201, body: presentGroup(await services.groups.create(number, body.subject, body.participants), number) };
  },
});
