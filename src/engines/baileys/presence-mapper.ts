import type { BaileysEventMap } from 'baileys';
import { isJidGroup } from 'baileys';
import { isContactPresence } from '../../domain/presence.ts';
import type { PresenceEvent } from '../engine-events.ts';
import { memberOf } from './group-mapper.ts';

/**
 * Baileys' presence.update as the engine port tells it, one event per contact, without our
 * number. `id` is the chat (the contact, or the group it types in); `lastSeen` is in Unix seconds.
 */
export function mapPresenceUpdate(update: BaileysEventMap['presence.update'], at: Date): Omit<PresenceEvent, 'toPhone'>[] {
  const groupId = isJidGroup(update.id) ? update.id : null;
  return Object.entries(update.presences).flatMap(([participant, data]) => {
    const contact = memberOf(participant, undefined);
    if (contact === null || !isContactPresence(data.lastKnownPresence)) return [];
    const lastSeen = typeof data.lastSeen === 'number' && data.lastSeen > 0 ? new Date(data.lastSeen * 1000) : null;
    return [{ contactPhone: contact.phone, contactLid: contact.lid, groupId, presence: data.lastKnownPresence, lastSeen, at }];
  });
}
