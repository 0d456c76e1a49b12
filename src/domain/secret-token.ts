import { createHash, randomBytes } from 'node:crypto';

const TOKEN_BYTES = 32;

/**
 * SHA-256, hex: the only form in which bearer secrets (API keys, session and invite tokens) are
 * stored. A fast hash is enough because each secret carries 256 random bits; there is nothing
 * to brute-force, and the lookup runs on every request.
 */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A fresh URL-safe bearer token and the hash to store in its place. */
export function generateSecretToken(): { token: string; hash: string } {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, hash: sha256Hex(token) };
}
