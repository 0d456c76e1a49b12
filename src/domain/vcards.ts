import { parseE164, type E164 } from './phone.ts';

/** The longest vCard a send may carry whole; WhatsApp's own cards are a few hundred bytes. */
const MAX_VCARD_LENGTH = 10_000;

/** What a card is built from: a name, its phones, and optionally where the person works and their e-mail addresses. */
export interface ContactFields {
  name: string;
  phones: readonly E164[];
  organization?: string;
  emails?: readonly string[];
}

/**
 * A vCard 3.0 as WhatsApp writes one. Each phone carries its WhatsApp id (`waid`), which is how
 * the recipient's app offers "Message" on the card. Text values are escaped as RFC 2426 says,
 * so a name with a comma, semicolon or line break cannot add fields of its own.
 */
export function buildVcard(fields: ContactFields): string {
  const name = escapeText(fields.name);
  return [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `FN:${name}`,
    ...fields.phones.map((phone) => `TEL;type=CELL;waid=${phone.slice(1)}:${phone}`),
    ...(fields.organization === undefined ? [] : [`ORG:${escapeText(fields.organization)}`]),
    ...(fields.emails ?? []).map((email) => `EMAIL;type=INTERNET:${escapeText(email)}`),
    `N:;${name};;;`,
    'END:VCARD',
  ].join('\n');
}

/** RFC 2426 text escaping: backslash, comma and semicolon are escaped, a line break becomes \n. */
function escapeText(value: string): string {
  return value.replace(/[\\;,]/g, (character) => `\\${character}`).replace(/\r\n|\r|\n/g, '\\n');
}

function unescapeText(value: string): string {
  return value.replace(/\\([\\;,nN])/g, (_match, character: string) => (character === 'n' || character === 'N' ? '\n' : character));
}

/** Lines of a vCard with folded continuations joined back (RFC 2425 §5.8.1). */
function unfoldedLines(vcard: string): string[] {
  return vcard
    .replace(/\r?\n[ \t]/g, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/**
 * A given vCard checked for what a recipient's app needs to show it: one card, version 3.0 or
 * 4.0 (or 2.1, which WhatsApp still reads), with a formatted name. Answers why not, or the name.
 */
export function readVcard(vcard: string): { name: string } | { problem: string } {
  if (vcard.length > MAX_VCARD_LENGTH) return { problem: `is longer than ${MAX_VCARD_LENGTH} characters` };
  const lines = unfoldedLines(vcard);
  if (lines[0]?.toUpperCase() !== 'BEGIN:VCARD' || lines.at(-1)?.toUpperCase() !== 'END:VCARD')
    return { problem: 'must begin with BEGIN:VCARD and end with END:VCARD' };
  if (lines.filter((line) => line.toUpperCase() === 'BEGIN:VCARD').length !== 1) return { problem: 'must hold exactly one card' };
  if (!lines.some((line) => /^VERSION:(2\.1|3\.0|4\.0)$/i.test(line))) return { problem: 'needs VERSION:3.0 (or 2.1 or 4.0)' };
  const formattedName = lines.find((line) => /^FN[;:]/i.test(line));
  const name = formattedName === undefined ? '' : unescapeText(formattedName.slice(formattedName.indexOf(':') + 1)).trim();
  if (name === '') return { problem: 'needs a non-empty FN (the name shown)' };
  return { name };
}

/**
 * The phones a vCard lists, in E.164. WhatsApp writes the number's WhatsApp id as `waid=`, which
 * is exact; other TEL values are parsed as written, and those that are no number are left out.
 */
export function phonesOfVcard(vcard: string): E164[] {
  const phones = new Set<E164>();
  for (const line of vcard.split(/\r?\n/)) {
    const match = /^(?:item\d+\.)?TEL([^:]*):(.*)$/i.exec(line.trim());
    if (match === null) continue;
    const waid = /waid=(\d+)/i.exec(match[1]!)?.[1];
    const phone = parseE164(waid === undefined ? match[2]!.trim() : `+${waid}`);
    if (phone !== undefined) phones.add(phone);
  }
  return [...phones];
}
