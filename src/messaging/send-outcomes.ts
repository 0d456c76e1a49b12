import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../domain/errors.ts';
import type { Message, QuotedMessage } from '../domain/model.ts';
import { messageStatusPayload } from '../domain/event-payloads.ts';
import type { SentMessage } from '../engines/engine.ts';
import type { EndOfBatch, GroupCommitter } from '../store/group-commit.ts';
import { insertReply } from '../store/repositories/conversations.ts';
import { StaleLeaseError } from '../store/repositories/leases.ts';
import { updateMessageStatus } from '../store/repositories/messages.ts';
import { savePollSecret } from '../store/repositories/polls.ts';
import { queueSentRecord, type BatchOutcome } from '../store/repositories/status-writes.ts';
import { releaseMonthlyUnit } from '../store/repositories/usage.ts';
import { enqueueEvent, queueEvent, NOTHING_QUEUED, type DeliveryNotifier, type Enqueued } from '../webhooks/outbox.ts';
import type { RecentSends } from './recent-sends.ts';

/** Waits between attempts of the commit of the engine's answer: about 3 s in all, past a database restart. */
const SENT_COMMIT_RETRY_DELAYS_MS = [50, 100, 200, 400, 800, 1_600];
/** After the request is answered, how long and how often the record of `sent` is tried again. */
const SENT_RECORD_BACKGROUND_MS = 30_000;
const SENT_RECORD_BACKGROUND_PERIOD_MS = 2_000;
/** The error code of a send the engine took whose record could not be committed. */
const OUTCOME_UNKNOWN = 'outcome_unknown';

export type SettledSend = Pick<Message, 'id' | 'accountId' | 'fromPhone' | 'toPhone' | 'direction' | 'group'>;

/** What the engine answered for a send, held until it is committed. */
export interface EngineAnswer {
  message: Message;
  engineMessageId: string;
  lease: SentMessage['lease'];
  quoted: QuotedMessage | undefined;
  sentAt: Date;
  /** A poll's secret, which its votes are opened with; kept in the same commit as `sent`. */
  pollSecret: string | undefined;
}

/**
 * What became of a send, written down: the engine's answer committed (with retries, and in the
 * background when the request could not wait for it), or the send settled as failed or unknown
 * with its unit given back. SendMessageService decides; this records, and tells subscribers.
 */
export class SendOutcomes {
  constructor(
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly logger: Logger,
    /** This node's sends, for their receipts: a committed record ends a receipt's wait. */
    private readonly recentSends: RecentSends,
  ) {}

  /**
   * Commits the engine's answer. The 200 waits for this commit, so that a message the client was
   * told is sent is never found `queued` after a crash. It is written under the lease of the
   * session that sent it: a node that lost the number in that instant is refused (StaleLeaseError,
   * not retried). Any other failure (a database restarting) is retried with backoff: the message
   * went out, and only the record of it is missing. A retry writes only over a row still pending,
   * so a commit that landed though its acknowledgement was lost is not recorded twice.
   */
  async recordSent(sent: EngineAnswer): Promise<Enqueued> {
    let lastError: unknown;
    try {
      for (const [attempt, delayMs] of [0, ...SENT_COMMIT_RETRY_DELAYS_MS].entries()) {
        if (delayMs > 0) await sleep(delayMs);
        try {
          const queued =
            (await this.committer.run(async (_trx, batch) => this.writeSent(batch, sent, attempt > 0))).value ?? NOTHING_QUEUED;
          this.recentSends.committed(sent.message, sent.engineMessageId);
          return queued;
        } catch (error) {
          if (error instanceof StaleLeaseError) throw error;
          lastError = error;
        }
      }
      throw lastError;
    } finally {
      this.recentSends.ended(sent.message.fromPhone!, sent.message.id);
    }
  }

  /**
   * Records `sent` for a send the engine took but whose fenced record was refused: its number
   * moved to another node between the hand-over and the record (a drain cut short, a node that
   * lost trust in its lease or was paused). The engine's answer is known, so the message is
   * `sent`, not unknown, and the client is told so. The record is made without the fence and
   * only over a row still pending (queued, or unknown by the sweep), by primary key: no other
   * node sends this row (its id is this send's alone, and an Idempotency-Key's claim keeps a
   * retry off it while it is queued), so nothing the new owner did can be overwritten.
   */
  async recordSentAfterMove(sent: EngineAnswer): Promise<Enqueued> {
    const queued = await this.committer.run(async (_trx, batch) => this.writeSent(batch, sent, true, false));
    this.recentSends.committed(sent.message, sent.engineMessageId);
    return queued.value ?? NOTHING_QUEUED;
  }

  /**
   * Queues the record of `sent` at the end of the caller's batch, where the batch's records are
   * fenced and written together (status-writes.ts); the reply, the poll's secret and the event
   * follow only if the row changed.
   */
  private writeSent(batch: EndOfBatch, sent: EngineAnswer, onlyIfPending: boolean, fenced = true): BatchOutcome<Enqueued> {
    const { message, engineMessageId, lease, quoted, sentAt } = sent;
    const row = { id: message.id, engineMessageId, at: sentAt.getTime(), onlyIfPending };
    return queueSentRecord(batch, fenced ? lease : undefined, row, async (trx, end) => {
      if (quoted !== undefined) await insertReply(trx, message, quoted);
      if (sent.pollSecret !== undefined) await savePollSecret(trx, message.id, sent.pollSecret);
      return queueEvent(trx, end, this.notifier, message.accountId, messageStatusPayload(message, 'sent', null, sentAt), sentAt);
    });
  }

  /**
   * The engine took the message but its record could not be committed. The row becomes
   * `unknown` (outcome_unknown) if the database takes that, never `failed`: the message may well
   * have reached the recipient. The record of `sent` is then retried in the background for a
   * while, and a receipt from the engine moves the row on too.
   */
  async sentButNotRecorded(sent: EngineAnswer, cause: unknown): Promise<AppError> {
    const { message, engineMessageId } = sent;
    this.logger.error(
      { err: cause, messageId: message.id, engineMessageId },
      'the engine took a send, but its record could not be committed; retrying in the background',
    );
    const at = new Date();
    try {
      const queued = await this.committer.run(async (trx) => {
        const marked = await updateMessageStatus(trx, message.id, {
          status: 'unknown',
          errorCode: OUTCOME_UNKNOWN,
          engineMessageId,
          at,
          onlyFrom: 'queued',
        });
        return marked
          ? enqueueEvent(trx, this.notifier, message.accountId, messageStatusPayload(message, 'unknown', OUTCOME_UNKNOWN, at), at)
          : NOTHING_QUEUED;
      });
      this.notifier.deliveriesQueued(queued);
    } catch (error) {
      this.logger.error(
        { err: error, messageId: message.id },
        'could not record a send as unknown either; the interrupted-send sweep will',
      );
    }
    void this.recordSentInBackground(sent);
    return new AppError(
      'send_not_recorded',
      'WhatsApp accepted the message, but the gateway could not record it; do not send it again. Its status is "unknown" until the record is made (then "sent") or a receipt arrives.',
      { message_id: message.id },
    );
  }

  private async recordSentInBackground(sent: EngineAnswer): Promise<void> {
    const deadline = Date.now() + SENT_RECORD_BACKGROUND_MS;
    while (Date.now() < deadline) {
      await sleep(SENT_RECORD_BACKGROUND_PERIOD_MS, undefined, { ref: false });
      try {
        const queued = (await this.committer.run(async (_trx, batch) => this.writeSent(batch, sent, true))).value ?? NOTHING_QUEUED;
        this.notifier.deliveriesQueued(queued);
        this.logger.info({ messageId: sent.message.id }, 'recorded a send whose first record had failed');
        return;
      } catch (error) {
        if (error instanceof StaleLeaseError) return;
      }
    }
    this.logger.error(
      { messageId: sent.message.id, engineMessageId: sent.engineMessageId },
      'gave up recording a send the engine took; its status stays unknown',
    );
  }

  /** Fails a send the engine never accepted: its unit goes back, and subscribers hear of it. */
  markFailed(message: SettledSend, errorCode: string, period: string): Promise<void> {
    return this.settleQueued(message, 'failed', errorCode, period);
  }

  /** Settles a send a crash cut off before the engine's answer was recorded: `unknown`, its unit given back. */
  markInterrupted(message: SettledSend, period: string): Promise<void> {
    return this.settleQueued(message, 'unknown', 'interrupted', period);
  }

  private async settleQueued(message: SettledSend, status: 'failed' | 'unknown', errorCode: string, period: string): Promise<void> {
    const at = new Date();
    const queued = await this.committer.run(async (trx) => {
      // Only a send still queued is settled, and only then is its unit returned: a row another
      // path has already settled is left as it is, and the quota is never given back twice.
      if (!(await updateMessageStatus(trx, message.id, { status, errorCode, at, onlyFrom: 'queued' }))) return NOTHING_QUEUED;
      await releaseMonthlyUnit(trx, message.accountId, period);
      return enqueueEvent(trx, this.notifier, message.accountId, messageStatusPayload(message, status, errorCode, at), at);
    });
    this.notifier.deliveriesQueued(queued);
  }
}
