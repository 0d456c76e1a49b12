import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { LRUCache } from 'lru-cache';
import { answerByLength, UNDECIDED } from './phone-lengths.ts';
import { isWhatsAppOnlyForm } from './phone-variants.ts';

/** A phone number in E.164: a plus sign and up to fifteen digits. */
export type E164 = string & { readonly __brand: 'E164' };

// Only what people actually write between digits is tolerated; letters, extensions and
// anything else are refused rather than guessed at.
const SEPARATORS = /[ ().-]/g;
const DIGITS_WITH_OPTIONAL_PLUS = /^\+?[0-9]+$/;

/**
 * Parses an international phone number. A leading plus is optional, the country code is not:
 * "447700900123", "+44 7700 900123", "(+44) 7700 900123" and "+44 (7700) 900-123" are the
 * same number. Separators are dropped first; what remains must be digits after one optional plus.
 * Returns undefined unless the country code exists and the number has a length that country
 * uses. Allocation is deliberately not checked (docs/adr/0002-phone-validation.md): the
 * metadata lags new number ranges, and refusing a real recipient loses a message, while the
 * ranges reserved for fiction, such as +44 7700 900xxx, are what sandbox users test with.
 */
export function parseE164(input: string): E164 | undefined {
  const compact = input.trim().replace(SEPARATORS, '');
  if (!DIGITS_WITH_OPTIONAL_PLUS.test(compact)) return undefined;
  const candidate = compact.startsWith('+') ? compact : `+${compact}`;
  if (candidate.length < 4) return undefined;
  // WhatsApp's own form of a Mexican mobile: refusing it would drop every message from one.
  if (isWhatsAppOnlyForm(candidate)) return candidate as E164;
  const byLength = answerByLength(candidate);
  if (byLength !== UNDECIDED) return byLength as E164 | undefined;
  const known = recentlyParsed.get(candidate);
  if (known !== undefined) return known;
  const parsed = parsePhoneNumberFromString(candidate);
  if (parsed === undefined || !parsed.isPossible()) return undefined;
  recentlyParsed.set(candidate, parsed.number as E164);
  return parsed.number as E164;
}

/**
 * Parsing costs tens of microseconds (the library compiles its patterns on every call), and a
 * sender's own numbers come back on every send. Most numbers never get here: the length table
 * (phone-lengths.ts) answers them first, so the cache holds only what the table leaves over. Only numbers that parsed are kept, so every key
 * is a short digit string and the cache's memory stays bounded whatever clients send.
 */
const recentlyParsed = new LRUCache<string, E164>({ max: 10_000 });
