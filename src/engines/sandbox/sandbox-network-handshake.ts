import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// How a node and the shared sandbox network prove to each other that both hold the cluster's
// WAGW_SECRET_KEY before a single request crosses the line. The network opens with a challenge;
// the node answers with its own nonce and a proof over both; the network answers with its proof.
// Only HMACs of fresh nonces travel, so the key never does, and a recorded exchange is useless
// against the next challenge.

/** The longest line either side reads before the other has proved itself. */
export const HANDSHAKE_LINE_BYTES = 1024;
/** How long the network waits for a node's answer to its challenge before it closes the socket. */
export const HANDSHAKE_TIMEOUT_MS = 5_000;

/** The key of the shared sandbox network's handshake, derived from WAGW_SECRET_KEY for this purpose alone. */
export function deriveSandboxNetworkKey(secretKey: Buffer): Buffer {
  return createHmac('sha256', secretKey).update('wa-gateway sandbox network').digest();
}

export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

/** What a node answers a challenge with; `side` keeps the network's proof from being replayed as a node's. */
export function handshakeProof(key: Buffer, side: 'node' | 'network', challenge: string, nodeNonce: string): string {
  return createHmac('sha256', key).update(`${side}\n${challenge}\n${nodeNonce}`).digest('hex');
}

export function isNonce(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{32}$/.test(value);
}

/** Compares a proof the other side gave with the expected one in constant time. */
export function proofMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(given, 'hex'));
}
