import { operatorScope } from '../../src/domain/tenant-scope.ts';
import type { Gateway } from '../../src/main.ts';
import { seedAccount, type SeededAccount } from './gateway.ts';
import type { FuzzWorld } from './fuzz-requests.ts';

/**
 * The caller the fuzzers send as: an enterprise account with two sandbox numbers and a valid
 * key, plus a revoked key of its own, so that generated requests can use each.
 */
export async function seedFuzzCaller(
  gateway: Gateway,
  world: Pick<FuzzWorld, 'foreignPhones' | 'bodyLimitBytes' | 'maxMessageLength'>,
): Promise<{ caller: SeededAccount; world: FuzzWorld }> {
  const caller = await seedAccount(gateway, { plan: 'enterprise', numbers: 2 });
  const revoked = await gateway.apiKeys.createKey({ accountId: caller.accountId, name: 'revoked' });
  await gateway.apiKeys.revokeKey(operatorScope(), revoked.apiKey.id);
  return { caller, world: { apiKey: caller.apiKey, revokedApiKey: revoked.plaintext, ownedPhones: caller.phones, ...world } };
}
