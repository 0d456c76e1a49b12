import type { E164 } from './phone.ts';

/** A place someone shared. `name` and `address` are what the sender's app attached, if anything. */
export interface SharedLocation {
  latitude: number;
  longitude: number;
  name: string | null;
  address: string | null;
  url: string | null;
}

/** A contact card: its name, the phones it lists that parse as numbers, and the card itself. */
export interface SharedContact {
  name: string;
  phones: E164[];
  /** The vCard as WhatsApp carried it, for systems that want every field. */
  vcard: string | null;
}

/**
 * What a message carries besides text and files. Stored with the message (as JSON) and sent to
 * webhooks as `location` or `contacts`, so nothing a person sends is dropped for lack of a type.
 */
export type StructuredContent = { location: SharedLocation } | { contacts: SharedContact[] };

export function isValidLocation(location: SharedLocation): boolean {
  return Number.isFinite(location.latitude) && Number.isFinite(location.longitude) && Math.abs(location.latitude) <= 90 && Math.abs(location.longitude) <= 180;
}

/** The structured part as webhooks and answers show it. */
export function presentStructured(content: StructuredContent | null): { location?: SharedLocation; contacts?: SharedContact[] } {
  if (content === null) return {};
  return 'location' in content ? { location: content.location } : { contacts: content.contacts };
}
