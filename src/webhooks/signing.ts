import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { LazyLru } from '../domain/lazy-lru.ts';
import { LRUCache } from 'lru-cache';
import type { SecretBox } from '../secrets/secret-box.ts';

const SECRET_BYTES = 32;
const SECRET_PREFIX = 'whsec_';
/** Decoded signing keys kept, one per webhook secret in use; a key that falls out is decoded again. */
const KEY_CACHE_ENTRIES = 10_000;

/** A new signing secret in the Standard Webhooks form: whsec_ and base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

const keys = new LRUCache<string, KeyObject>({ max: KEY_CACHE_ENTRIES });

/**
 * The secret's key as a KeyObject: on Node 24 an HMAC keyed with a Buffer spends about 25 µs
 * deciding what kind of key it was given (3 µs with a KeyObject, measured in one run), which was
 * 2 % of an incoming message's CPU at 1,000/s (docs/benchmarks.md, round three).
 */
function signingKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key === undefined) {
    key = createSecretKey(Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64'));
    keys.set(secret, key);
  }
  return key;
}

/**
 * The Standard Webhooks headers: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under
 * the secret's decoded bytes, as the specification defines it. The signature is computed with
 * node:crypto and a cached key rather than a new `standardwebhooks` Webhook per delivery (whose
 * pure-JS SHA-256 cost several times more); test/webhooks/signing.test.ts checks it against that
 * library. With more than one secret (during the 24 hours after a rotation) every signature is
 * sent, space-separated, so receivers on either secret verify.
 */
export function signatureHeaders(messageId: string, timestamp: Date, body: string, secrets: string[]): SignatureHeaders {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  const signed = `${messageId}.${seconds}.${body}`;
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', signingKey(secret)).update(signed).digest('base64')}`);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': seconds,
    'webhook-signature': signatures.join(' '),
  };
}

/** A delivery's webhook secrets as stored: sealed, with the previous one while it is still honoured. */
export interface SealedWebhookSecrets {
  sealedSecret: string;
  sealedPreviousSecret: string | null;
  previousSecretExpiresAt: number | null;
}

/**
 * Opens sealed webhook secrets, remembering each by its sealed form: exact, so a rotation (a new
 * sealed value) is seen on the next delivery, and cheap, since every delivery needs its secret.
 */
export class SealedSecrets {
  private readonly opened = new LazyLru<string, string>({ max: KEY_CACHE_ENTRIES });

  constructor(private readonly secretBox: SecretBox) {}

  /** The secrets a delivery is signed with at `at`: the current one, and the previous one until it expires. */
  signingSecrets(delivery: SealedWebhookSecrets, at: Date): string[] {
    const secrets = [this.open(delivery.sealedSecret)];
    if (delivery.sealedPreviousSecret !== null && (delivery.previousSecretExpiresAt ?? 0) > at.getTime()) {
      secrets.push(this.open(delivery.sealedPreviousSecret));
    }
    return secrets;
  }

  private open(sealed: string): string {
    let secret = this.opened.get(sealed);
    if (secret === undefined) {
      secret = this.secretBox.open(sealed);
      this.opened.set(sealed, secret);
    }
    return secret;
  }
}
