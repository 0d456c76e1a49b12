import type { E164 } from './phone.ts';

/**
 * One mobile line that WhatsApp may know by either of two numbers (docs/whatsapp.md, "Number
 * variants"; ADR 0050). WhatsApp names an account by the number it registered with, and keeps
 * that form after the country's numbering changed:
 *
 * - Brazil added a ninth digit (a leading 9) to mobile numbers, area by area, from 2012 to 2016.
 *   Accounts registered before it keep the 12-digit form `55 DDD XXXXXXXX`; newer ones have
 *   `55 DDD 9XXXXXXXX`. Pre-change mobile numbers began with 6 to 9, landlines with 2 to 5, so a
 *   landline has no variant.
 * - Mexico dialled mobiles from abroad as `+52 1` + ten digits until 2019; WhatsApp still names
 *   Mexican mobiles `521` + ten digits.
 * - Argentina dials mobiles from abroad as `+54 9` + ten digits (area code and number, without
 *   the domestic `15`); WhatsApp names them `549` + ten digits, and people write them without the 9.
 *
 * Which form an account has cannot be told from the number: only WhatsApp's answer to a check says.
 */
const RULES: readonly { long: RegExp; short: RegExp; toShort: string; toLong: string }[] = [
  { long: /^\+55([1-9][1-9])9([6-9][0-9]{7})$/, short: /^\+55([1-9][1-9])([6-9][0-9]{7})$/, toShort: '+55$1$2', toLong: '+55$19$2' },
  { long: /^\+521([0-9]{10})$/, short: /^\+52([0-9]{10})$/, toShort: '+52$1', toLong: '+521$1' },
  { long: /^\+549([0-9]{10})$/, short: /^\+54([0-9]{10})$/, toShort: '+54$1', toLong: '+549$1' },
];

/** The other form WhatsApp may know `phone`'s line by; undefined where the country has none. */
export function phoneVariant(phone: E164 | string): E164 | undefined {
  for (const rule of RULES) {
    if (rule.long.test(phone)) return phone.replace(rule.long, rule.toShort) as E164;
    if (rule.short.test(phone)) return phone.replace(rule.short, rule.toLong) as E164;
  }
  return undefined;
}

/** Whether two numbers are one line, written the same or as each other's variant. */
export function sameLine(a: E164 | string, b: E164 | string): boolean {
  return a === b || phoneVariant(a) === b;
}

/**
 * Mexico's `+52 1` form, which the numbering plan no longer has (so the phone library refuses it)
 * but which WhatsApp names every Mexican mobile by: a sender's JID and a check's answer use it.
 */
export function isWhatsAppOnlyForm(candidate: string): boolean {
  return RULES[1]!.long.test(candidate);
}
