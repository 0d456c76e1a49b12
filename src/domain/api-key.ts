import { randomBytes } from 'node:crypto';
import { sha256Hex } from './secret-token.ts';

const KEY_SECRET_BYTES = 32;

export interface GeneratedApiKey {
  /** The full key. It is shown once and never stored. */
  plaintext: string;
  /** SHA-256 of the key, hex: the only form the store ever sees. */
  hash: string;
  /** A display hint such as "wagw_live_sk_…3f9a". */
  hint: string;
}

export function generateApiKey(prefix: string): GeneratedApiKey {
  const plaintext = `${prefix}_live_sk_${randomBytes(KEY_SECRET_BYTES).toString('hex')}`;
  return { plaintext, hash: hashApiKey(plaintext), hint: apiKeyHint(plaintext) };
}

/** Unlike a password, a key needs no slow hash: see sha256Hex. */
export function hashApiKey(plaintext: string): string {
  return sha256Hex(plaintext);
}

export function apiKeyHint(plaintext: string): string {
  const marker = '_live_sk_';
  const head = plaintext.slice(0, plaintext.indexOf(marker) + marker.length);
  return `${head}…${plaintext.slice(-4)}`;
}

/**
 * The shape of a key under any prefix this gateway allows: WAGW_KEY_PREFIX names the prefix of
 * new keys, and changing it must not make the keys already handed out unusable.
 */
export const API_KEY_PATTERN = /^[a-z][a-z0-9]{0,15}_live_sk_[0-9a-f]{64}$/;
