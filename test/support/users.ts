import { randomBytes, scryptSync } from 'node:crypto';
import type { CreatedUser } from '../../src/accounts/accounts-service.ts';
import { newId } from '../../src/domain/ids.ts';
import type { User, UserRole } from '../../src/domain/model.ts';
import type { Gateway } from '../../src/main.ts';

/**
 * The scrypt cost of the users tests sign in with: 2^10 rather than production's 2^17, which
 * takes 0.3 to 2 s of a core per hash on the reference machine and made the dashboard's files
 * the slowest of the suite. A stored hash names its own parameters
 * (`scrypt$<log2 N>$<r>$<p>$<salt>$<key>`, src/accounts/passwords.ts), so the gateway checks
 * these passwords through its one production path, at the cost the hash names.
 */
export const TEST_COST_LOG2 = 10;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;

const hashes = new Map<string, string>();

function cheapHash(password: string): string {
  let hash = hashes.get(password);
  if (hash === undefined) {
    const salt = randomBytes(16);
    const key = scryptSync(password.normalize('NFC'), salt, 32, { N: 2 ** TEST_COST_LOG2, r: BLOCK_SIZE, p: PARALLELISM });
    hash = ['scrypt', TEST_COST_LOG2, BLOCK_SIZE, PARALLELISM, salt.toString('base64'), key.toString('base64')].join('$');
    hashes.set(password, hash);
  }
  return hash;
}

export interface TestUserInput {
  /** Lower case, as the accounts service would store it. */
  email: string;
  accountId: string | null;
  password: string;
  /** As the accounts service defaults it: admin for a user of no account, member otherwise. */
  role?: UserRole;
  isOperator?: boolean;
}

/**
 * A user to sign in with, for tests about what a signed-in user can do: inserted through the
 * accounts service's own insert, with a cheap hash of the password (above). Tests about creating
 * users, their passwords or signing in itself use `accounts.createUser`, which hashes at full cost.
 */
export async function createTestUser(gateway: Gateway, input: TestUserInput): Promise<CreatedUser> {
  const user: User = {
    id: newId('user'),
    accountId: input.accountId,
    email: input.email,
    role: input.role ?? (input.accountId === null ? 'admin' : 'member'),
    isOperator: input.isOperator ?? false,
    createdAt: new Date(),
  };
  await gateway.accounts.insertPreparedUser(gateway.store.db, { user, passwordHash: cheapHash(input.password) });
  return { user };
}
