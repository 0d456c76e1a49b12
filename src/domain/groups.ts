import { AppError } from './errors.ts';
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

/** A request's group id, or the 400 that names `field`. */
export function parseGroupId(raw: string, field: string): string {
  if (isGroupId(raw)) return raw;
  throw new AppError(
    'invalid_request',
    `${field} must be a group id as GET /groups gives it (digits then @g.us); "${raw.slice(0, 64)}" is not one.`,
    { field },
  );
}

/** Our number's role in the group, or undefined when it is not a participant. */
export function roleOf(group: Group, phone: E164): GroupRole | undefined {
  return group.participants.find((participant) => participant.phone === phone)?.role;
}

/** What an admin does to participants. */
export type ParticipantAction = 'add' | 'remove' | 'promote' | 'demote';
export const participantActions: readonly ParticipantAction[] = ['add', 'remove', 'promote', 'demote'];

/**
 * What became of one participant of an admin's change: done, or why not. WhatsApp refuses an add
 * per person: a privacy setting that allows only contacts to add them, a phone that left too
 * recently, a phone without WhatsApp.
 */
export type ParticipantOutcome =
  | 'done'
  | 'already_member'
  | 'not_member'
  | 'privacy_restricted'
  | 'recently_left'
  | 'not_on_whatsapp'
  | 'refused';

export interface ParticipantResult {
  phone: E164;
  outcome: ParticipantOutcome;
}

/** A group's subject and description, as an admin changes them (null clears the description). */
export interface GroupSettings {
  subject?: string;
  description?: string | null;
}

/** Someone in a group, as a change names them: by phone, or by LID when the phone is unknown. */
export interface GroupMember {
  phone: E164 | null;
  lid: string | null;
}

/**
 * What changed in a group: participants added by an admin, joined by link, removed, left,
 * promoted or demoted; or its subject or description.
 */
type GroupChangeKind = 'added' | 'joined' | 'removed' | 'left' | 'promoted' | 'demoted' | 'subject' | 'description';

export interface GroupChange {
  groupId: string;
  kind: GroupChangeKind;
  /** Those the change is about (empty for a subject or description change). */
  participants: GroupMember[];
  /** The new subject, for a subject change; with others, the group's subject where the engine knows it. */
  subject?: string;
  /** The new description (null when cleared), for a description change. */
  description?: string | null;
  /** Who made the change, when WhatsApp says. */
  actor: GroupMember | null;
  at: Date;
}

/** WhatsApp cuts a group description at 2,048 characters. */
export const MAX_GROUP_DESCRIPTION_LENGTH = 2048;
/** The most participants one change names. */
export const MAX_PARTICIPANTS_PER_CHANGE = 50;

/** A group of the simulated network as it is kept between runs: the sandbox engine keeps it, the
 * store writes it (here, below both, so that neither imports the other: docs/adr/0061). */
export interface SandboxGroupRecord {
  id: string;
  subject: string;
  description: string | null;
  inviteCode: string;
  members: [phone: string, role: GroupRole][];
}
