import { randomBytes } from 'node:crypto';
import { sha256Hex } from './secret-token.ts';

/**
 * An operator token: the operator API's bearer secret (docs/adr/0057-operator-api.md). Its shape
 * differs from an API key's (`<prefix>_live_sk_…`), so that neither is ever taken for the other.
 */
export interface OperatorToken {
  id: string;
  name: string;
  /** What a person reads to tell tokens apart: "wagw_op_…3f9a". */
  hint: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

const TOKEN_PREFIX = 'wagw_op_';
export const OPERATOR_TOKEN_PATTERN = /^wagw_op_[0-9a-f]{64}$/;

/** A new token: the plaintext, shown once, and the SHA-256 and hint that are stored instead. */
export function generateOperatorToken(): { plaintext: string; hash: string; hint: string } {
  const plaintext = `${TOKEN_PREFIX}${randomBytes(32).toString('hex')}`;
  return { plaintext, hash: hashOperatorToken(plaintext), hint: `${TOKEN_PREFIX}…${plaintext.slice(-4)}` };
}

/** As for API keys, a fast hash is enough: the token carries 256 random bits (secret-token.ts). */
export function hashOperatorToken(plaintext: string): string {
  return sha256Hex(plaintext);
}
