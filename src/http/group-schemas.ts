import { ref } from './schema-refs.ts';

/** The group models of the public API, as named shared schemas (openapi-components.ts). */
const groupSummaryProperties = {
  id: {
    type: 'string',
    description: "WhatsApp's group id (…@g.us): what to_group and /groups/{id} take.",
    examples: ['120363025246125486@g.us'],
  },
  subject: { type: 'string' },
  size: { type: 'integer', description: 'How many participants it has, our number included.' },
  is_admin: { type: 'boolean', description: 'Whether from_phone is an admin (or the super admin), and so may change the group.' },
} as const;

const participantComponent = {
  $id: 'Participant',
  type: 'object',
  description: 'A member of a group, by phone and LID as WhatsApp gives them.',
  required: ['phone', 'lid', 'role'],
  properties: {
    phone: { type: ['string', 'null'], description: "E.164; null when WhatsApp gives only the participant's LID." },
    lid: { type: ['string', 'null'], description: 'The participant\'s LID ("<digits>@lid") when WhatsApp gives one.' },
    role: { type: 'string', enum: ['member', 'admin', 'superadmin'] },
  },
} as const;

const groupSummaryComponent = {
  $id: 'GroupSummary',
  type: 'object',
  description: 'A group as GET /groups lists it.',
  required: ['id', 'subject', 'size', 'is_admin'],
  properties: groupSummaryProperties,
} as const;

const groupComponent = {
  $id: 'Group',
  type: 'object',
  description: 'A group as from_phone sees it, with its participants.',
  required: ['id', 'subject', 'description', 'size', 'is_admin', 'participants'],
  properties: {
    ...groupSummaryProperties,
    description: { type: ['string', 'null'] },
    participants: { type: 'array', items: ref('Participant') },
  },
} as const;

export const groupSchema = ref('Group');
export const groupSummarySchema = ref('GroupSummary');
export const groupSchemaComponents = [participantComponent, groupSummaryComponent, groupComponent] as const;
