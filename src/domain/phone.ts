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
/** WhatsApp's own id of a person's chat (whatsapp-web.js and WAHA write `@c.us`, Baileys and Evolution `@s.whatsapp.net`). */
const PERSON_CHAT_ID = /^\+?([0-9]+)@(?:c\.us|s\.whatsapp\.net)$/i;

/**
 * Parses an international phone number. A leading plus is optional, the country code is not:
 * "447700900123", "+44 7700 900123", "(+44) 7700 900123" and "+44 (7700) 900-123" are the
 * same number. Separators are dropped first; what remains must be digits after one optional plus.
 * WhatsApp's chat id of the person is the same number too ("447700900123@c.us",
 * "447700900123@s.whatsapp.net"), as clients moving from WAHA or Evolution API write it
 * (docs/api.md, "Phones and chat ids").
 * Returns undefined unless the country code exists and the number has a length that country
 * uses. Allocation is deliberately not checked (docs/adr/0002-phone-validation.md): the
 * metadata lags new number ranges, and refusing a real recipient loses a message, while the
 * ranges reserved for fiction, such as +44 7700 900xxx, are what sandbox users test with.
 */
export function parseE164(input: string): E164 | undefined {
  const chatId = PERSON_CHAT_ID.exec(input.trim());
  const compact = chatId === null ? input.trim().replace(SEPARATORS, '') : chatId[1]!;
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

/**
 * Why a value given as a phone is not one, in words that point at the fix: a chat id of another
 * kind names what it is, and only a plain number is told to include its country code.
 */
export function phoneProblem(field: string, raw: string): string {
  const value = raw.trim();
  const shown = JSON.stringify(value.slice(0, 64));
  if (/@g\.us$/i.test(value)) return `${field} takes a person's phone; ${shown} is a group id, which this call does not take here.`;
  if (/@lid$/i.test(value)) return `${field} takes a phone; ${shown} is a LID, which this call does not take here.`;
  const chatId = /^(.*)@(c\.us|s\.whatsapp\.net)$/i.exec(value);
  if (chatId !== null)
    return `${field} ${shown} is a chat id whose number is not a valid international phone number: the digits before @${chatId[2]} must be the number with its country code, e.g. 447700900123@${chatId[2]}.`;
  if (value.includes('@'))
    return `${field} ${shown} is not a phone or a chat id WhatsApp uses (<digits>@c.us or <digits>@s.whatsapp.net); give the number with its country code, e.g. +447700900123.`;
  // The value quoted, as the CLI and the console show it back: what was typed, not only where.
  return `${field} ${shown} is not a valid international phone number; include the country code, e.g. +447700900123.`;
}
