import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a delivery's timestamp may be from our clock, as Standard Webhooks advises: five minutes. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

export interface SignedHeaders {
  'webhook-id'?: string;
  'webhook-timestamp'?: string;
  'webhook-signature'?: string;
}

/**
 * Whether a delivery is the gateway's: one of its `v1,` signatures is the HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{raw body}` under the secret's decoded bytes, compared in
 * constant time, and its timestamp is recent (a replayed old delivery is refused). During the 24
 * hours after a rotation the gateway sends one signature per secret, space-separated.
 */
export function verifySignature(secret: string, headers: SignedHeaders, rawBody: Buffer, nowSeconds: number): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (id === undefined || timestamp === undefined || signatures === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) return false;
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), rawBody]))
    .digest();
  let verified = false;
  // Every candidate is compared, so the time taken says nothing about which one matched.
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',', 2);
    const given = Buffer.from(signature ?? '', 'base64');
    if (version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)) verified = true;
  }
  return verified;
}
