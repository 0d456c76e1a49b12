import type { E164 } from '../../domain/phone.ts';
import { phoneVariant } from '../../domain/phone-variants.ts';

/**
 * The form of a number a simulated phone is registered under, to rehearse lines that WhatsApp
 * knows by the other form than the one written (ADR 0050). The rule is the sandbox's own, fixed
 * so that a test can pick either case: a Brazilian mobile with area code 31 or above has the old
 * 12-digit form (`+55 31 8877-6655`), one below 31 the ninth digit (`+55 11 98877-6655`);
 * Mexican mobiles are `+52 1` and Argentine ones `+54 9`, as WhatsApp names them. Every other
 * number is registered as written.
 */
export function sandboxRegisteredForm(phone: E164): E164 {
  const variant = phoneVariant(phone);
  if (variant === undefined) return phone;
  const long = variant.length > phone.length ? variant : phone;
  const short = long === phone ? variant : phone;
  if (long.startsWith('+55')) return Number(long.slice(3, 5)) >= 31 ? short : long;
  return long;
}
