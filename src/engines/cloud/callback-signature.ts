import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Whether `header` (X-Hub-Signature-256: `sha256=<hex>`) is Meta's signature of `rawBody`: the
 * HMAC-SHA256 of the bytes exactly as they came, keyed with the app secret. Compared in constant
 * time, so that a forger learns nothing from how long a refusal takes.
 */
export function cloudSignatureMatches(appSecret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (header === undefined || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Meta's signature of `rawBody`, as the stand-in and tests make it. */
export function cloudSignatureOf(appSecret: string, rawBody: Buffer | string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

/** Two secrets compared in constant time, whatever their lengths (the verify token of Meta's handshake). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHmac('sha256', 'wagw-compare').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
