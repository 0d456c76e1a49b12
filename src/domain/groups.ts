import type { E164 } from './phone.ts';

/** A participant's standing in a group, as WhatsApp has it: the creator is the super admin. */
export type GroupRole = 'member' | 'admin' | 'superadmin';

/** A participant, by phone where WhatsApp gives one and by LID otherwise (never a guessed phone). */
export interface GroupParticipant {
  phone: E164 | null;
  lid: string | null;
  role: GroupRole;
}

/** A group as one of our numbers sees it; `id` is WhatsApp's group JID. */
export interface Group {
  id: string;
  subject: string;
  description: string | null;
  participants: GroupParticipant[];
}

/** The most participants a new group is created with; WhatsApp's own bound on a group is larger. */
export const MAX_NEW_GROUP_PARTICIPANTS = 256;
/** The most members one group message may mention. */
export const MAX_MENTIONS = 256;
/** WhatsApp cuts a subject at 100 characters. */
export const MAX_GROUP_SUBJECT_LENGTH = 100;

/** WhatsApp's group JID: digits (older groups: creator-timestamp) at g.us. */
export function isGroupId(value: string): boolean {
  return /^[0-9]{6,32}(-[0-9]{6,16})?@g\.us$/.test(value);
}

/** Our number's role in the group, or undefined when it is not a participant. */
export function roleOf(group: Group, phone: E164): GroupRole | undefined {
  return group.participants.find((participant) => participant.phone === phone)?.role;
}
