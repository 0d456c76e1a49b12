import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Message } from '../domain/model.ts';
import type { EngineSendFailure } from '../engines/engine.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findClaimedMessage,
  findIdempotencyKey,
  purgeExpiredIdempotencyKeys,
  releaseIdempotencyKey,
  renewIdempotencyLease,
  type IdempotencyRecord,
} from '../store/repositories/idempotency-keys.ts';
import type { SendMessageService } from './send-message.ts';
import type { SendOutcome, SendRequest } from './send-request.ts';

/** A key answers for 24 hours after its first use; then it is treated as never used. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60_000;

const PRINTABLE_ASCII_KEY = /^[\x20-\x7e]{1,255}$/;

/** Claims can be lost to a concurrent release or takeover; past this many, the key is busy. */
const MAX_CLAIM_ATTEMPTS = 3;

/** The engine's refusals: a message failed with one of these never reached WhatsApp. */
// A restriction (463) and rate-overlimit are WhatsApp refusing the message: nothing went out.
const REFUSALS: ReadonlySet<string> = new Set<EngineSendFailure>([
  'not_connected',
  'rejected',
  'recipient_not_on_whatsapp',
  'restricted',
  'rate_limited',
]);

export interface IdempotentSendOutcome {
  /** True when the answer is the stored one of an earlier request with the same key. */
  replayed: boolean;
  statusCode: number;
  body: unknown;
}

/** The header's value, or undefined without the header; anything but 1–255 printable ASCII is refused. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === 'string' && PRINTABLE_ASCII_KEY.test(header)) return header;
  throw new AppError('invalid_idempotency_key', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.', {
    field: 'Idempotency-Key',
  });
}

/**
 * What makes two sends the same request: the normalised phones and the text. The path is left
 * out because /send_message and /api/send_message are one operation and share keys.
 */
export function requestFingerprint(request: SendFingerprinted): string {
  // A text send's fingerprint is unchanged from before media and replies, so keys stored then still match.
  const recipient = request.toGroup === undefined ? request.toPhone : { to_group: request.toGroup, mentions: [...request.mentions].sort() };
  const parts: unknown[] = [request.fromPhone, recipient, request.text];
  if (request.mediaFingerprint !== undefined) parts.push(request.mediaFingerprint);
  if (request.replyTo !== undefined) parts.push({ reply_to: request.replyTo });
  // A fetched preview differs from fetch to fetch; the ask (below) is what the client sent.
  if (request.structured !== undefined && !('linkPreview' in request.structured)) parts.push({ structured: request.structured });
  if (request.linkPreview !== undefined) parts.push({ link_preview: request.linkPreview });
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

type SendFingerprinted = { fromPhone: string } & Pick<SendRequest, 'text' | 'mediaFingerprint' | 'replyTo' | 'structured' | 'linkPreview'> &
  ({ toPhone: SendRequest['toPhone']; toGroup?: undefined } | { toGroup: string; mentions: readonly string[] });

type Resolution =
  | { kind: 'answer'; outcome: IdempotentSendOutcome }
  | { kind: 'send'; record: IdempotencyRecord }
  | { kind: 'claim_again' };

/**
 * Sends with an Idempotency-Key (docs/adr/0010): the first request claims the key in the
 * database, and every later one with the key gets that request's answer instead of a second
 * message. Requests without a key never come here.
 */
export class IdempotentSendService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly sender: SendMessageService,
    private readonly logger: Logger,
    /**
     * An in-flight claim older than this was abandoned by a crash. It is the age at which the
     * interrupted-send sweep fails a queued send (one setting, WAGW_INTERRUPTED_SEND_AFTER_MS):
     * no engine takes this long to answer. Safety does not rest on it: a takeover keeps the
     * claim's message id, so the message row can still be written once.
     */
    readonly abandonedAfterMs: number,
  ) {}

  /** `present` turns the sent message into the 200's body, which is stored for replays. */
  async send(request: SendRequest, key: string, present: (message: Message) => unknown): Promise<IdempotentSendOutcome> {
    const fingerprint = requestFingerprint({ ...request, fromPhone: request.number.phone });
    for (let attempt = 1; attempt <= MAX_CLAIM_ATTEMPTS; attempt++) {
      const at = new Date();
      const claim = await this.committer.run((trx) =>
        claimIdempotencyKey(trx, {
          accountId: request.number.accountId,
          key,
          fingerprint,
          messageId: newId('message'),
          at,
          expiredBefore: new Date(at.getTime() - IDEMPOTENCY_KEY_TTL_MS),
        }),
      );
      const resolution: Resolution = claim.claimed
        ? { kind: 'send', record: claim.record }
        : claim.record === undefined
          ? { kind: 'claim_again' }
          : await this.resolveExisting(claim.record, fingerprint, at, present);
      if (resolution.kind === 'answer') return resolution.outcome;
      if (resolution.kind === 'send') return this.sendClaimed(request, resolution.record, present);
    }
    throw requestInProgress();
  }

  /**
   * What any node can answer for a key without the number's session, read only: a stored answer
   * (replayed), a key reused with another body (422), or a claim still in flight (409). Undefined
   * when the request must go to the node that serves from_phone: a new key, or a claim to recover.
   * This keeps the documented order of checks, idempotency before the session, on every node.
   */
  async answerFromRecord(request: SendRequest, key: string): Promise<IdempotentSendOutcome | undefined> {
    const record = await findIdempotencyKey(this.store.db, request.number.accountId, key);
    const at = Date.now();
    if (record === undefined || at - record.createdAt.getTime() >= IDEMPOTENCY_KEY_TTL_MS) return undefined;
    if (record.fingerprint !== requestFingerprint({ ...request, fromPhone: request.number.phone })) throw keyReused();
    if (record.state === 'completed' && record.response !== null) {
      return { replayed: true, statusCode: record.response.statusCode, body: JSON.parse(record.response.body) };
    }
    if (at - record.lockedAt.getTime() < this.abandonedAfterMs) throw requestInProgress();
    return undefined;
  }

  /** Deletes keys past their 24 hours; the server's minute sweep calls this. */
  purgeExpired(now: Date = new Date()): Promise<number> {
    return purgeExpiredIdempotencyKeys(this.store.db, new Date(now.getTime() - IDEMPOTENCY_KEY_TTL_MS));
  }

  private async sendClaimed(
    request: SendRequest,
    record: IdempotencyRecord,
    present: (message: Message) => unknown,
  ): Promise<IdempotentSendOutcome> {
    let message: SendOutcome;
    try {
      message = await this.sender.send({ ...request, messageId: record.messageId });
    } catch (error) {
      await this.releaseIfNothingWentOut(record);
      throw error;
    }
    const body = present(message);
    // A message the governor queued is answered 202, and so is every replay of it.
    const statusCode = message.queue === undefined ? 200 : 202;
    // The message went out (or is stored in its queue), so the answer stands even if storing it
    // fails: the claim then stays in flight, and a retry after the lease rebuilds the same
    // answer from the message row.
    await this.committer
      .run((trx) => completeIdempotencyKey(trx, record, { statusCode, body: JSON.stringify(body) }))
      .catch((error: unknown) =>
        this.logger.error({ err: error, messageId: record.messageId }, 'could not store the answer of an idempotent send'),
      );
    return { replayed: false, statusCode, body };
  }

  /**
   * After a failed send, the message row says whether WhatsApp may have the message: no row, or
   * a refusal, means it cannot, and the key is freed for a retry. Anything else keeps the claim,
   * to be answered from the row once the lease runs out.
   */
  private async releaseIfNothingWentOut(record: IdempotencyRecord): Promise<void> {
    try {
      const found = await findClaimedMessage(this.store.db, record);
      if (found === undefined || isRefusal(found.message, found.errorCode)) {
        await this.committer.run((trx) => releaseIdempotencyKey(trx, record));
      }
    } catch (error) {
      this.logger.error({ err: error, messageId: record.messageId }, 'could not release the Idempotency-Key of a failed send');
    }
  }

  private async resolveExisting(
    record: IdempotencyRecord,
    fingerprint: string,
    at: Date,
    present: (message: Message) => unknown,
  ): Promise<Resolution> {
    if (record.fingerprint !== fingerprint) throw keyReused();
    if (record.state === 'completed' && record.response !== null) {
      return {
        kind: 'answer',
        outcome: { replayed: true, statusCode: record.response.statusCode, body: JSON.parse(record.response.body) },
      };
    }
    if (at.getTime() - record.lockedAt.getTime() < this.abandonedAfterMs) throw requestInProgress();
    return this.recoverAbandoned(record, at, present);
  }

  /** An in-flight claim whose lease ran out: its message row, or the lack of one, decides. */
  private async recoverAbandoned(record: IdempotencyRecord, at: Date, present: (message: Message) => unknown): Promise<Resolution> {
    const found = await findClaimedMessage(this.store.db, record);
    if (found === undefined) {
      // Never written, so never handed to WhatsApp: this retry sends it, under the same id, so
      // that a holder still alive after all would collide on the primary key, not send twice.
      const renewed = await this.committer.run((trx) => renewIdempotencyLease(trx, record, at));
      return renewed ? { kind: 'send', record: { ...record, lockedAt: at } } : { kind: 'claim_again' };
    }
    const { message, errorCode } = found;
    if (message.status === 'queued') throw requestInProgress({ message_id: message.id });
    if (isRefusal(message, errorCode)) {
      await this.committer.run((trx) => releaseIdempotencyKey(trx, record));
      return { kind: 'claim_again' };
    }
    if (message.status === 'failed' || message.status === 'unknown') {
      throw new AppError(
        'send_outcome_unknown',
        "The request first made with this Idempotency-Key was cut off before WhatsApp's answer was recorded, so it is not known whether " +
          'its message went out; it is not sent again under this key.',
        { message_id: message.id, error_code: errorCode },
      );
    }
    // The engine accepted it: answer what the original 200 said, and keep that answer.
    const body = present({ ...message, status: 'sent' });
    await this.committer.run((trx) => completeIdempotencyKey(trx, record, { statusCode: 200, body: JSON.stringify(body) }));
    return { kind: 'answer', outcome: { replayed: true, statusCode: 200, body } };
  }
}

function isRefusal(message: Message, errorCode: string | null): boolean {
  return message.status === 'failed' && errorCode !== null && REFUSALS.has(errorCode);
}

function keyReused(): AppError {
  return new AppError(
    'idempotency_key_reused',
    'This Idempotency-Key was used with a different request; use a new key for a new message (a key must come with the same from_phone, ' +
      'to_phone and message for 24 hours).',
  );
}

function requestInProgress(meta?: { message_id: string }): AppError {
  return new AppError(
    'request_in_progress',
    'A request with this Idempotency-Key is still in progress; retry in a few seconds to get its answer.',
    meta,
  );
}
