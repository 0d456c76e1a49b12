import { Webhook } from 'standardwebhooks';
import { randomBytes } from 'node:crypto';

const SECRET_BYTES = 32;

/** A new signing secret in the Standard Webhooks form: whsec_ and base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The Standard Webhooks headers. With more than one secret (during the 24 hours after a
 * rotation) every signature is sent, space-separated, so receivers on either secret verify.
 */
export function signatureHeaders(messageId: string, timestamp: Date, body: string, secrets: string[]): SignatureHeaders {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
