/**
 * WhatsApp's group metadata, as Baileys gives it, in the gateway's terms. Pure, so every shape of
 * participant (by phone, by LID, by both) is a unit test built from Baileys' own types.
 */
import { isLidUser, isPnUser, jidDecode, jidEncode, jidNormalizedUser, type GroupMetadata, type GroupParticipant as BaileysParticipant } from 'baileys';
import type { Group, GroupParticipant, GroupRole } from '../../domain/groups.ts';
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
