/**
 * What Baileys tells of who is who (a LID and the phone behind it), in the gateway's terms. Pure,
 * so every shape is a unit test built from Baileys' own types: its LID-mapping events
 * (`lid-mapping.update`, a history sync's `lidPnMappings`), a group's participants, and the
 * answers of a number check.
 */
import { isHostedLidUser, isHostedPnUser, isLidUser, isPnUser, jidDecode, type GroupMetadata, type LIDMapping } from 'baileys';
import { parseE164, type E164 } from '../../domain/phone.ts';

export interface LearnedIdentity {
  lid: string;
  phone: E164;
}

/** A LID-mapping entry; undefined when either side is not what it claims to be. */
export function identityOfMapping(mapping: Partial<LIDMapping>): LearnedIdentity | undefined {
  const lid = lidOf(mapping.lid);
  const phone = phoneOf(mapping.pn);
  return lid === undefined || phone === undefined ? undefined : { lid, phone };
}

/** Every participant the metadata names both ways: by `id` and `phoneNumber`, or `id` and `lid`. */
export function identitiesOfGroup(metadata: Pick<GroupMetadata, 'participants'>): LearnedIdentity[] {
  return metadata.participants.flatMap((participant) => {
    const lid = lidOf(participant.lid) ?? lidOf(participant.id);
    const phone = phoneOf(participant.phoneNumber) ?? phoneOf(participant.id);
    return lid === undefined || phone === undefined ? [] : [{ lid, phone }];
  });
}

/** A number check's answer that carries the LID of a phone on WhatsApp. */
export function identityOfCheck(answer: { jid: string; exists: unknown; lid?: unknown }): LearnedIdentity | undefined {
  if (answer.exists !== true || typeof answer.lid !== 'string') return undefined;
  return identityOfMapping({ lid: answer.lid, pn: answer.jid });
}

/** `<digits>@lid`, without the device part. */
function lidOf(jid: string | undefined): string | undefined {
  if (jid === undefined || !(isLidUser(jid) || isHostedLidUser(jid))) return undefined;
  const user = jidDecode(jid)?.user;
  return user === undefined || !/^[0-9]+$/.test(user) ? undefined : `${user}@lid`;
}

function phoneOf(jid: string | undefined): E164 | undefined {
  if (jid === undefined || !(isPnUser(jid) || isHostedPnUser(jid))) return undefined;
  const user = jidDecode(jid)?.user;
  return user === undefined || !/^[0-9]+$/.test(user) ? undefined : parseE164(`+${user}`);
}
