import { defineSessionOperation, ok } from '../operation.ts';
import { fromPhone } from './group-number.ts';
import { fromPhoneBody, groupIdParams, ONE_GROUP_ERRORS } from './group-requests.ts';

const OUTCOMES = ['done', 'already_member', 'not_member', 'privacy_restricted', 'recently_left', 'not_on_whatsapp', 'refused'] as const;

export const changeGroupParticipants = defineSessionOperation(
  {
    params: groupIdParams,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone', 'action', 'participants'],
      properties: {
        ...fromPhoneBody,
        action: { type: 'string', enum: ['add', 'remove', 'promote', 'demote'] },
        participants: { type: 'array', items: { type: 'string' }, description: '1 to 50 phones, with their country code.' },
      },
    },
  },
  ['groups'],
)({
  method: 'POST',
  scope: 'send',
  path: '/groups/:id/participants',
  operationId: 'changeGroupParticipants',
  summary: 'Add, remove, promote or demote participants',
  description:
    'from_phone must be an admin. Answers one outcome per phone, in order: done, already_member, not_member, privacy_restricted (their ' +
    'privacy settings let only contacts add them: send them the invite link), recently_left, not_on_whatsapp or refused. Members hear ' +
    'of it through group.updated.',
  tag: 'groups',
  answers: {
    200: {
      type: 'object',
      required: ['action', 'results'],
      properties: {
        action: { type: 'string' },
        results: {
          type: 'array',
          items: {
            type: 'object',
            required: ['phone', 'outcome'],
            properties: { phone: { type: 'string' }, outcome: { type: 'string', enum: OUTCOMES } },
          },
        },
      },
    },
  },
  errors: ONE_GROUP_ERRORS,
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ params, body, number }, services) => {
    const results = await services.groups.changeParticipants(number, params.id, body.action, body.participants);
    return ok({ action: body.action, results: results.map((result) => ({ phone: result.phone, outcome: result.outcome })) });
  },
});
