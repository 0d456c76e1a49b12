import type { Message } from '../../domain/model.ts';
import type { Executor } from '../database.ts';
import type { IdempotencyKeyRow } from '../schema-messages.ts';
import { toMessage } from './messages.ts';

type IdempotencyKeyState = 'in_flight' | 'completed';

/** One Idempotency-Key of one account, and what became of the request that first used it. */
export interface IdempotencyRecord {
  accountId: string;
  key: string;
  fingerprint: string;
  /** The id the claiming request gives its message. */
  messageId: string;
  state: IdempotencyKeyState;
  /** The stored answer, once the request completed. */
  response: { statusCode: number; body: string } | null;
  createdAt: Date;
  lockedAt: Date;
}

function toRecord(row: IdempotencyKeyRow): IdempotencyRecord {
  return {
    accountId: row.account_id,
    key: row.idempotency_key,
    fingerprint: row.request_fingerprint,
    messageId: row.message_id,
    state: row.state as IdempotencyKeyState,
    response:
      row.response_status === null || row.response_body === null
        ? null
        : { statusCode: Number(row.response_status), body: row.response_body },
    createdAt: new Date(Number(row.created_at)),
    lockedAt: new Date(Number(row.locked_at)),
  };
}

export interface KeyClaim {
  accountId: string;
  key: string;
  fingerprint: string;
  messageId: string;
  at: Date;
  /** A key first claimed before this instant has expired and is claimed afresh. */
  expiredBefore: Date;
}

/** `record` is undefined only when the key was released between the claim and the read. */
export type ClaimResult = { claimed: true; record: IdempotencyRecord } | { claimed: false; record: IdempotencyRecord | undefined };

/**
 * Claims a key for a request, or returns the record that holds it. The insert and the takeover
 * of an expired row are one statement: the primary key lets exactly one of any number of
 * concurrent claimants, in any process, have the row, and the others read the winner's.
 */
export async function claimIdempotencyKey(db: Executor, claim: KeyClaim): Promise<ClaimResult> {
  const at = claim.at.getTime();
  const claimed = await db
    .insertInto('idempotency_keys')
    .values({
      account_id: claim.accountId,
      idempotency_key: claim.key,
      request_fingerprint: claim.fingerprint,
      message_id: claim.messageId,
      state: 'in_flight',
      response_status: null,
      response_body: null,
      created_at: at,
      locked_at: at,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['account_id', 'idempotency_key'])
        .doUpdateSet((eb) => ({
          request_fingerprint: eb.ref('excluded.request_fingerprint'),
          message_id: eb.ref('excluded.message_id'),
          state: 'in_flight',
          response_status: null,
          response_body: null,
          created_at: eb.ref('excluded.created_at'),
          locked_at: eb.ref('excluded.locked_at'),
        }))
        .where('idempotency_keys.created_at', '<', claim.expiredBefore.getTime()),
    )
    .returningAll()
    .executeTakeFirst();
  if (claimed !== undefined) return { claimed: true, record: toRecord(claimed) };
  return { claimed: false, record: await findIdempotencyKey(db, claim.accountId, claim.key) };
}

export async function findIdempotencyKey(db: Executor, accountId: string, key: string): Promise<IdempotencyRecord | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row && toRecord(row);
}

/** Stores the answer of the request holding the claim; false if the claim is no longer its own. */
export async function completeIdempotencyKey(
  db: Executor,
  holder: Pick<IdempotencyRecord, 'accountId' | 'key' | 'messageId'>,
  response: { statusCode: number; body: string },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ state: 'completed', response_status: response.statusCode, response_body: response.body })
    .where('account_id', '=', holder.accountId)
    .where('idempotency_key', '=', holder.key)
    .where('message_id', '=', holder.messageId)
    .where('state', '=', 'in_flight')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Frees a key whose request sent nothing, so that a retry may; false if another holder has it. */
export async function releaseIdempotencyKey(
  db: Executor,
  holder: Pick<IdempotencyRecord, 'accountId' | 'key' | 'messageId'>,
): Promise<boolean> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', holder.accountId)
    .where('idempotency_key', '=', holder.key)
    .where('message_id', '=', holder.messageId)
    .where('state', '=', 'in_flight')
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Takes over an abandoned in-flight claim, keeping its message id. It succeeds only if the lease
 * is still the one the caller saw, so of two retries taking over at once, one wins.
 */
export async function renewIdempotencyLease(
  db: Executor,
  abandoned: Pick<IdempotencyRecord, 'accountId' | 'key' | 'messageId' | 'lockedAt'>,
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ locked_at: at.getTime() })
    .where('account_id', '=', abandoned.accountId)
    .where('idempotency_key', '=', abandoned.key)
    .where('message_id', '=', abandoned.messageId)
    .where('state', '=', 'in_flight')
    .where('locked_at', '=', abandoned.lockedAt.getTime())
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The message a claim planned, with the error code a failed send recorded, if it was written. */
export async function findClaimedMessage(
  db: Executor,
  claim: Pick<IdempotencyRecord, 'accountId' | 'messageId'>,
): Promise<{ message: Message; errorCode: string | null } | undefined> {
  const row = await db
    .selectFrom('messages')
    .selectAll()
    .where('account_id', '=', claim.accountId)
    .where('id', '=', claim.messageId)
    .executeTakeFirst();
  return row && { message: toMessage(row), errorCode: row.error_code };
}

/**
 * Deletes keys first claimed before `createdBefore`. Housekeeping across every account, so the
 * only query here not scoped to one; an expired key is treated as absent whether or not it is
 * purged yet.
 */
export async function purgeExpiredIdempotencyKeys(db: Executor, createdBefore: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', createdBefore.getTime()).executeTakeFirst();
  return Number(result.numDeletedRows);
}
