import type { Gateway } from '../../main.ts';
import { AppError } from '../../domain/errors.ts';
import type { E164 } from '../../domain/phone.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';

/** An answer made on the node that serves a number, to be relayed as it is. */
export interface OwnerAnswer {
  statusCode: number;
  body: unknown;
  retryAfter?: string;
}

/**
 * Runs a call that needs from_phone's session where that session runs: here, or on the node that
 * serves it, through the signed internal route `path` with `{account_id, body}`. A phone outside
 * the key's account is refused as the send refuses it (403 phone_not_owned).
 */
export async function onNumberOwner(gateway: Gateway, scope: AccountScope, fromPhone: E164, here: () => Promise<OwnerAnswer>, path: string, body: unknown): Promise<OwnerAnswer> {
  if (gateway.supervisor.servesPhone(fromPhone)) return here();
  const number = await gateway.numbers.findNumber(scope, fromPhone).catch(notOwned);
  return gateway.router.run(number, here, async (owner, signal) => {
    const answer = await gateway.nodeClient.call(owner, 'POST', path, { account_id: scope.accountId, body }, signal);
    return { statusCode: answer.status, body: answer.body, retryAfter: answer.headers.get('retry-after') ?? undefined };
  });
}

/** number_not_found as the public API says it of a from_phone. */
export function notOwned(error: unknown): never {
  if (error instanceof AppError && error.code === 'number_not_found') throw new AppError('phone_not_owned', 'from_phone is not a number of your account.', { field: 'from_phone' });
  throw error;
}
