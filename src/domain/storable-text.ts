import { AppError } from './errors.ts';

/**
 * Whether a string can be stored and read back unchanged on both databases: PostgreSQL's text
 * refuses U+0000 (a 500 where it reached a statement), and a lone surrogate has no UTF-8 form
 * (SQLite stores U+FFFD in its place, so the text read back is not the text written).
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

/**
 * The one check of every free-text field (ADR 0042): walks a parsed body, query or form and
 * refuses the first string, key or value, that is not storable, with a 400 naming its path
 * (`poll.options[1]`, `call_reply_text`). Run where input is parsed, so that no field, old or
 * new, reaches a handler without it.
 */
export function assertStorableStrings(value: unknown, path = ''): void {
  const where = unstorableAt(value, path, 0);
  if (where === undefined) return;
  const field = where === '' ? 'body' : where;
  throw new AppError('invalid_request', `${field} contains a character that cannot be stored: U+0000 or an unpaired surrogate.`, {
    field,
  });
}

/** Deeper than any body the gateway takes; past it the walk stops rather than recurse without end. */
const MAX_DEPTH = 64;

function unstorableAt(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = unstorableAt(value[index], `${path}[${index}]`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  // Only what a parser made: a stream (an upload's body) or any other object is not input text.
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const keyPath = path === '' ? key : `${path}.${key}`;
    if (!isStorableText(key)) return path === '' ? 'body' : path;
    const found = unstorableAt(item, keyPath, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
