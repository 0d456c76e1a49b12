import type { E164 } from './phone.ts';
import { parseE164 } from './phone.ts';

/**
 * One person as one of our numbers knows them: by LID (WhatsApp's privacy address,
 * `<digits>@lid`), by phone, or by both once the LID's phone is known (ADR 0032).
 */
export interface PersonIdentity {
  lid: string | null;
  phone: E164 | null;
}

/** What told the gateway that a LID belongs to a phone. */
export type IdentitySource = 'message' | 'mapping' | 'group' | 'check' | 'sandbox';

/** A person of a number's contact list: both identifiers where known, and their WhatsApp name. */
export interface Contact extends PersonIdentity {
  numberId: string;
  whatsappName: string | null;
  saved: boolean;
  /** When the LID's phone became known, and how; null while only one of them is. */
  identityLearnedAt: Date | null;
  identitySource: IdentitySource | null;
  lastMessageAt: Date | null;
  createdAt: Date;
}

const LID = /^[0-9]{1,32}@lid$/;

/** A LID as the gateway writes it: digits and `@lid`, without a device part. */
export function isLid(value: string): boolean {
  return LID.test(value);
}

/** A person named either way, as the API takes one: a LID (`…@lid`) or a phone in any common spelling. */
export function parsePersonRef(raw: string): { lid: string } | { phone: E164 } | undefined {
  const trimmed = raw.trim();
  if (isLid(trimmed)) return { lid: trimmed };
  const phone = parseE164(trimmed);
  return phone === undefined ? undefined : { phone };
}
