import { roleOf, type Group } from '../../../domain/groups.ts';
import type { WhatsAppNumber } from '../../../domain/model.ts';
import type { ErrorCode } from '../../../domain/errors.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from '../error-responses.ts';

/** What every group operation can answer: it acts through from_phone's session. */
export const GROUP_ERRORS = [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS] as const satisfies readonly ErrorCode[];
/** What acting on one group adds: it may be unknown, or from_phone not a member or not an admin. */
export const ONE_GROUP_ERRORS = [
  ...GROUP_ERRORS,
  'group_not_found',
  'not_group_member',
  'not_group_admin',
] as const satisfies readonly ErrorCode[];

// The group models are named shared schemas (src/http/group-schemas.ts), referenced from the document.
export { groupSchema, groupSummarySchema } from '../../group-schemas.ts';

export const fromPhoneQuery = {
  type: 'object',
  required: ['from_phone'],
  properties: { from_phone: { type: 'string', description: 'One of your numbers: the groups as it sees them.' } },
  additionalProperties: false,
} as const;

export const groupIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: "The group's id (…@g.us), URL-encoded." } },
} as const;
export const fromPhoneBody = { from_phone: { type: 'string', description: 'One of your numbers, in the group.' } } as const;

export const inviteLinkSchema = {
  type: 'object',
  required: ['group_id', 'code', 'link'],
  properties: {
    group_id: { type: 'string' },
    code: { type: 'string' },
    link: { type: 'string', description: 'https://chat.whatsapp.com/<code>: whoever has it may join.' },
  },
} as const;

export function presentGroupSummary(group: Group, number: WhatsAppNumber) {
  const role = roleOf(group, number.phone);
  return { id: group.id, subject: group.subject, size: group.participants.length, is_admin: role === 'admin' || role === 'superadmin' };
}

export function presentGroup(group: Group, number: WhatsAppNumber) {
  return {
    ...presentGroupSummary(group, number),
    description: group.description,
    participants: group.participants.map((participant) => ({ phone: participant.phone, lid: participant.lid, role: participant.role })),
  };
}
