import { AppError } from './errors.ts';
import { parseE164, phoneProblem, type E164 } from './phone.ts';

/**
 * A request's list of phones (`field`), each in E.164 and in the order given, or a 400: for a
 * list shorter than `min` or longer than `max` (saying `tooMany` when given), or naming the
 * first entry that is not a phone.
 */
export function parsePhoneList(raw: readonly string[], field: string, bounds: { min: number; max: number; tooMany?: string }): E164[] {
  if (raw.length < bounds.min || raw.length > bounds.max) {
    const range = bounds.min === 0 ? `at most ${bounds.max}` : `${bounds.min} to ${bounds.max}`;
    throw new AppError(
      'invalid_request',
      raw.length > bounds.max && bounds.tooMany !== undefined ? bounds.tooMany : `${field} holds ${range} phone numbers.`,
      { field },
    );
  }
  return raw.map((value, index) => {
    const phone = parseE164(value);
    if (phone === undefined)
      throw new AppError('invalid_phone_number', phoneProblem(`${field}[${index}]`, value), { field: `${field}[${index}]` });
    return phone;
  });
}
