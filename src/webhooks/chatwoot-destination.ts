import { AppError } from '../domain/errors.ts';
import { parseE164 } from '../domain/phone.ts';
import type { ChatwootInbox } from '../domain/webhooks.ts';
import type { Executor } from '../store/database.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';

/** The longest access token accepted: Chatwoot's are 24 characters; room for other installs' longer ones. */
const MAX_TOKEN_LENGTH = 512;

/** A Chatwoot inbox as a caller gives it; the token may be left out of a change, keeping the sealed one. */
export interface ChatwootInboxInput {
  accountId: number;
  inboxId: number;
  apiAccessToken?: string;
  /** One number of the account the inbox serves; null or absent: all of the account's numbers. */
  number?: string | null;
}

/**
 * Checks a Chatwoot inbox's ids and token, and that a number it is limited to is the account's.
 * The base URL is checked by the webhooks' destination check (an http(s) URL past the SSRF
 * guard); the token comes back apart, to be sealed.
 */
export async function checkChatwootInbox(
  db: Executor,
  accountId: string,
  input: ChatwootInboxInput,
  tokenRequired: boolean,
): Promise<{ inbox: ChatwootInbox; apiAccessToken: string | undefined }> {
  for (const [field, value] of [
    ['chatwoot.account_id', input.accountId],
    ['chatwoot.inbox_id', input.inboxId],
  ] as const) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new AppError('invalid_request', `${field} must be a positive whole number, as Chatwoot shows it.`, { field });
    }
  }
  const token = input.apiAccessToken?.trim();
  if ((token === undefined && tokenRequired) || token === '' || (token !== undefined && token.length > MAX_TOKEN_LENGTH)) {
    throw new AppError(
      'invalid_request',
      `chatwoot.api_access_token must be the access token of a Chatwoot agent or bot of the inbox (1 to ${MAX_TOKEN_LENGTH} characters).`,
      { field: 'chatwoot.api_access_token' },
    );
  }
  return {
    inbox: { accountId: input.accountId, inboxId: input.inboxId, number: await ownNumber(db, accountId, input.number) },
    apiAccessToken: token,
  };
}

async function ownNumber(db: Executor, accountId: string, given: string | null | undefined): Promise<string | null> {
  if (given === undefined || given === null) return null;
  const phone = parseE164(given);
  const number = phone === undefined ? undefined : await findNumberByPhone(db, phone);
  if (number === undefined || number.accountId !== accountId) {
    throw new AppError('invalid_request', `chatwoot.number must be one of your account's numbers; ${given} is not.`, {
      field: 'chatwoot.number',
    });
  }
  return number.phone;
}
