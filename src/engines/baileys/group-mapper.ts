/**
 * WhatsApp's group metadata, as Baileys gives it, in the gateway's terms. Pure, so every shape of
 * participant (by phone, by LID, by both) is a unit test built from Baileys' own types.
 */
import {
  isLidUser,
  isPnUser,
  jidDecode,
  jidEncode,
  jidNormalizedUser,
  type GroupMetadata,
  type GroupParticipant as BaileysParticipant,
} from 'baileys';
import type { Group, GroupChange, GroupMember, GroupParticipant, GroupRole } from '../../domain/groups.ts';
import type { BaileysEventMap } from 'baileys';
import { parseE164, type E164 } from '../../domain/phone.ts';

export function toGroup(metadata: GroupMetadata): Group {
  return {
    id: metadata.id,
    subject: metadata.subject,
    description: metadata.desc ?? null,
    participants: metadata.participants.map(toParticipant),
  };
}

function toParticipant(participant: BaileysParticipant): GroupParticipant {
  const candidates = [participant.phoneNumber, participant.id];
  const phone = candidates.map(phoneOf).find((found) => found !== undefined) ?? null;
  const lidJid = [participant.lid, participant.id].find((jid) => jid !== undefined && isLidUser(jid));
  return { phone, lid: lidJid === undefined ? null : jidNormalizedUser(lidJid), role: roleOf(participant) };
}

function roleOf(participant: BaileysParticipant): GroupRole {
  if (participant.admin === 'superadmin' || participant.isSuperAdmin) return 'superadmin';
  if (participant.admin === 'admin' || participant.isAdmin) return 'admin';
  return 'member';
}

function phoneOf(jid: string | undefined): E164 | undefined {
  if (jid === undefined || !isPnUser(jid)) return undefined;
  const user = jidDecode(jid)?.user;
  return user === undefined || !/^[0-9]+$/.test(user) ? undefined : parseE164(`+${user}`);
}

/**
 * The JIDs a group message mentions its members by: each member as the group addresses them
 * (a LID-addressed group knows its members by LID), found by phone; a phone the metadata does
 * not show is mentioned by its phone JID.
 */
export function mentionJids(metadata: GroupMetadata | undefined, phones: readonly E164[]): string[] {
  const byPhone = new Map((metadata?.participants ?? []).map((participant) => [toParticipant(participant).phone, participant.id]));
  return phones.map((phone) => byPhone.get(phone) ?? jidEncode(phone.slice(1), 's.whatsapp.net'));
}

/**
 * The members a group message mentions, by phone where the JID or the group's metadata gives
 * one (a LID-addressed group names them by LID), and by LID otherwise.
 */
export function mentionedMembers(metadata: GroupMetadata | undefined, jids: readonly string[]): string[] {
  return jids.flatMap((jid) => {
    const phone =
      phoneOf(jid) ?? phoneOf(metadata?.participants.find((participant) => participant.id === jid || participant.lid === jid)?.phoneNumber);
    if (phone !== undefined) return [phone];
    return isLidUser(jid) ? [jidNormalizedUser(jid)] : [];
  });
}

/**
 * A participants update as changes: an add by the person themselves is a join (by invite link),
 * a removal of oneself is a leave. `modify` (a member's address changing) is no news.
 */
export function participantChanges(update: BaileysEventMap['group-participants.update'], at: Date): GroupChange[] {
  const actor = memberOf(update.author, update.authorPn);
  const participants = update.participants.map((participant) => {
    const { phone, lid } = toParticipant(participant);
    return { phone, lid };
  });
  const self = actor !== null && participants.length === 1 && sameMember(actor, participants[0]!);
  const kind = {
    add: self ? 'joined' : 'added',
    remove: self ? 'left' : 'removed',
    promote: 'promoted',
    demote: 'demoted',
    modify: undefined,
  }[update.action] as GroupChange['kind'] | undefined;
  return kind === undefined ? [] : [{ groupId: update.id, kind, participants, actor, at }];
}

/** A `groups.update` entry as subject and description changes. */
export function settingsChanges(update: Partial<GroupMetadata>, at: Date): GroupChange[] {
  if (update.id === undefined) return [];
  const actor = memberOf(update.author, update.authorPn);
  const changes: GroupChange[] = [];
  if (typeof update.subject === 'string')
    changes.push({ groupId: update.id, kind: 'subject', participants: [], subject: update.subject, actor, at });
  if (update.desc !== undefined)
    changes.push({ groupId: update.id, kind: 'description', participants: [], description: update.desc ?? null, actor, at });
  return changes;
}

/** A member (or caller, or contact) by its JID and, where WhatsApp gives it, its phone JID. */
export function memberOf(jid: string | undefined, pnJid: string | undefined): GroupMember | null {
  if (jid === undefined && pnJid === undefined) return null;
  const phone = phoneOf(pnJid) ?? phoneOf(jid) ?? null;
  const lid = jid !== undefined && isLidUser(jid) ? jidNormalizedUser(jid) : null;
  return phone === null && lid === null ? null : { phone, lid };
}

function sameMember(a: GroupMember, b: GroupMember): boolean {
  return (a.phone !== null && a.phone === b.phone) || (a.lid !== null && a.lid === b.lid);
}
