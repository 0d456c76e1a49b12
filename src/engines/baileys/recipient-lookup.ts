// Whether phones use WhatsApp, asked of Baileys' socket many at a time, with the answers matched
// to the phones asked in either of a country's two forms (ADR 0050).
import type { E164 } from '../../domain/phone.ts';
import type { SessionInbound } from './session-inbound.ts';
import type { LookupMany, RecipientAnswer } from '../recipient-directory.ts';
import type { SessionSocket } from './session-socket.ts';
import { identityOfCheck } from './identity-mapper.ts';
import { phoneVariant } from '../../domain/phone-variants.ts';

/**
 * One onWhatsApp query for many phones. WhatsApp answers each account on WhatsApp by its JID, the
 * number it registered with, and leaves out the others. That JID is the phone asked for, or, in a
 * country whose numbers have two forms (Brazil's ninth digit, Mexico's 52 1, Argentina's 54 9),
 * the other form: such an answer belongs to the phone asked in that form, and its JID is where
 * messages to that phone must go (ADR 0050).
 */
export function lookupOn(socket: Pick<SessionSocket, 'onWhatsApp'>, session: Pick<SessionInbound, 'reportIdentities'>): LookupMany {
  return async (phones) => {
    const answers = new Map<E164, RecipientAnswer>();
    const byDigits = new Map(phones.map((phone) => [phone.slice(1), phone]));
    const answered = (await socket.onWhatsApp(...byDigits.keys())) ?? [];
    // Newer WhatsApp answers name the phone's LID as well, which the map keeps.
    session.reportIdentities(answered.map(identityOfCheck), 'check');
    const asAnswer = (answer: (typeof answered)[number]): RecipientAnswer => ({
      exists: answer.exists === true,
      waId: answer.exists === true ? `${userOf(answer.jid)}@s.whatsapp.net` : null,
    });
    // Exact answers first, so that a variant answer never takes a phone asked in both forms.
    const unmatched = answered.filter((answer) => {
      const phone = byDigits.get(userOf(answer.jid));
      if (phone !== undefined) answers.set(phone, asAnswer(answer));
      return phone === undefined;
    });
    for (const answer of unmatched) {
      const phone = phoneVariant(`+${userOf(answer.jid)}`);
      if (phone !== undefined && byDigits.has(phone.slice(1)) && !answers.has(phone)) answers.set(phone, asAnswer(answer));
    }
    return answers;
  };
}

/** A JID's user part: the digits, without server or device. */
function userOf(jid: string): string {
  return jid.split('@')[0]!.split(':')[0]!;
}
