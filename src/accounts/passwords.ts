import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// OWASP's scrypt parameters for password storage: N=2^17, r=8, p=1.
const COST_LOG2 = 17;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
// scrypt needs 128 * N * r bytes; Node's default ceiling of 32 MiB is below that.
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;

function derive(password: string, salt: Buffer, costLog2: number, blockSize: number, parallelism: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_BYTES,
      { N: 2 ** costLog2, r: blockSize, p: parallelism, maxmem: MAX_MEMORY_BYTES },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

/** Hashes a password as `scrypt$<log2 N>$<r>$<p>$<salt>$<key>`, base64, so parameters can rise later. */
export function hashPassword(password: string): Promise<string> {
  return hashAtCost(password, COST_LOG2);
}

async function hashAtCost(password: string, costLog2: number): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, costLog2, BLOCK_SIZE, PARALLELISM);
  return ['scrypt', costLog2, BLOCK_SIZE, PARALLELISM, salt.toString('base64'), key.toString('base64')].join('$');
}

/**
 * The gateway's password hashing: new hashes at one cost (OWASP's, N=2^17, unless the process
 * that builds the gateway chose a cheaper one for its tests, see GatewayBoundaries), and the
 * decoy an unknown email is checked against, at that same cost so that it takes as long as a
 * wrong password. A stored hash names its own cost, so verifying needs no setting.
 */
export class PasswordHasher {
  private decoyHash: Promise<string> | undefined;

  constructor(private readonly costLog2 = COST_LOG2) {}

  hash(password: string): Promise<string> {
    return hashAtCost(password, this.costLog2);
  }

  verify(password: string, stored: string): Promise<boolean> {
    return verifyPassword(password, stored);
  }

  /** Made once, on the first unknown email. */
  decoy(): Promise<string> {
    this.decoyHash ??= this.hash('decoy password for unknown emails');
    return this.decoyHash;
  }
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, costLog2, blockSize, parallelism, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !costLog2 || !blockSize || !parallelism || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), Number(costLog2), Number(blockSize), Number(parallelism));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A password for a generated account: 24 random bytes, URL-safe. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
