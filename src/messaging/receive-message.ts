import { newId } from '../domain/ids.ts';
import { insertMessageReferrals } from '../store/repositories/message-referrals.ts';
import type { Message, MessageStatus, SessionLease, WhatsAppNumber } from '../domain/model.ts';
import { findByEngineId, insertReply } from '../store/repositories/conversations.ts';
import { incomingMessagePayload, messageStatusPayload } from '../domain/event-payloads.ts';
import type { IncomingMedia } from '../engines/engine.ts';
import type { IncomingMessageEvent, ReceiptEvent } from '../engines/engine-events.ts';
import type { ReceivedMedia } from '../domain/event-payloads.ts';
import { DOWNLOAD_RETRY_DELAYS_MS, fetchIncomingFile, webhookAddresses } from '../media/received-media.ts';
import { insertPendingDownload } from '../store/repositories/media-downloads.ts';
import type { MediaLinks } from '../media/media-links.ts';
import type { MediaService } from '../media/media-service.ts';
import type { Store } from '../store/database.ts';
import type { EndOfBatch, GroupCommitter } from '../store/group-commit.ts';
import { fenceLease, queueStatusAdvance, type BatchOutcome } from '../store/repositories/status-writes.ts';
import { advanceOutboundStatus, findInboundByEngineId, findOutboundStatus } from '../store/repositories/messages.ts';
import type { Database } from '../store/schema.ts';
import type { Transaction } from 'kysely';
import type { RecentSends, RecordedSend } from './recent-sends.ts';
import { StaleLeaseError } from '../store/repositories/leases.ts';
import { markEarlierRead } from '../store/repositories/read-receipts.ts';
import { savePollSecret } from '../store/repositories/polls.ts';
import { findMessageGroups, insertMessageGroups, knownSubject } from '../store/repositories/groups.ts';
import {
  insertMessageAndEnqueue,
  mergeQueued,
  NOTHING_QUEUED,
  queueEvent,
  type DeliveryNotifier,
  type Enqueued,
} from '../webhooks/outbox.ts';
import type { Executor } from '../store/database.ts';
import { conversationNotes } from '../store/repositories/conversation-notes.ts';
import { completeIdentity, learnAndReport } from './identities.ts';

/** The statuses a receipt may move a message from: receipts only ever move it forward. */
const RECEIPT_TRANSITIONS: Record<ReceiptEvent['status'], MessageStatus[]> = {
  // A send whose outcome could not be recorded learns it from the engine's receipt.
  delivered: ['sent', 'unknown'],
  read: ['sent', 'delivered', 'unknown'],
  failed: ['queued', 'sent', 'unknown'],
};
/**
 * A receipt can overtake the commit that records the engine's message id (the network is
 * faster than our fsync), so an unknown id is retried for a few seconds before giving up.
 */
const RECEIPT_RETRY_DELAYS_MS = [20, 100, 500, 1_000, 2_000];

/** An incoming message as stored, with its number, and whether this call stored it (not a redelivery). */
export interface ReceivedMessage {
  message: Message;
  number: WhatsAppNumber;
  fresh: boolean;
}

/** Stores what engines receive. Incoming messages never count against the monthly volume. */
export class ReceiveMessageService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly media: MediaService,
    private readonly links: MediaLinks,
    private readonly receiveTimeoutMs: number,
    private readonly onStaleWrite?: (error: StaleLeaseError) => void,
    private readonly recentSends?: RecentSends,
  ) {}

  async receive(event: IncomingMessageEvent): Promise<Message> {
    return (await this.storeIncoming(event)).message;
  }

  /** Stores an incoming message once (a redelivery finds the first), and tells its subscribers. */
  async storeIncoming(event: IncomingMessageEvent): Promise<ReceivedMessage> {
    const number = (await this.store.lookups.numberWithPlan(event.toPhone))?.number;
    if (number === undefined) {
      throw new Error(`An engine reported a message for ${event.toPhone}, which this gateway does not hold.`);
    }
    if (event.fromPhone === null && event.fromLid === null) {
      throw new Error(`An engine reported a message for ${event.toPhone} with neither a sender phone nor a LID.`);
    }
    const media = event.media === undefined ? undefined : await this.storeMedia(number.accountId, event.media);
    // A group message names its group with the subject the engine gave, or the one the number knew.
    const group =
      event.group === undefined
        ? null
        : { id: event.group.id, subject: event.group.subject ?? (await knownSubject(this.store.db, number.id, event.group.id)) ?? null };
    const retryToken = event.media?.retryToken ?? null;
    const message: Message = {
      id: newId('message'),
      accountId: number.accountId,
      numberId: number.id,
      direction: 'inbound',
      fromPhone: event.fromPhone,
      fromLid: event.fromLid,
      toPhone: number.phone,
      text: event.text,
      contentKind: event.contentKind,
      mediaId: media !== undefined && 'stored' in media ? media.stored.id : null,
      structured: event.structured ?? null,
      status: 'received',
      engineMessageId: event.engineMessageId,
      createdAt: event.receivedAt,
      group,
      ...(group !== null && { mentions: event.mentions ?? [] }),
      ...(event.referral !== undefined && { referral: event.referral }),
    };
    // The message and its deliveries commit together: the outbox promise. A message the network
    // hands over again (after a failover, or a reconnect before its acknowledgement) is already
    // stored, and is neither stored nor reported twice; the unique index backs this check up.
    const stored = await this.committer.run(async (trx, batch) => {
      const earlier = await findInboundByEngineId(trx, number.id, event.engineMessageId);
      if (earlier !== undefined) return { message: earlier, queued: NOTHING_QUEUED, fresh: false };
      // The sender as one person: learned when the message names both, completed from the map otherwise.
      const learned = await this.identify(trx, number, event, message);
      if (event.quotedEngineId !== undefined) {
        const quoted = await findByEngineId(trx, number.id, event.quotedEngineId);
        message.replyTo = { messageId: quoted?.id ?? null, engineMessageId: event.quotedEngineId };
      }
      const queued = await insertMessageAndEnqueue(
        trx,
        this.notifier,
        message,
        incomingMessagePayload(message, media, webhookAddresses(this.links, this.media.linkTtlMs, media)),
      );
      if (message.replyTo) await insertReply(trx, message, message.replyTo);
      if (event.pollSecret !== undefined) await savePollSecret(trx, message.id, event.pollSecret);
      await insertMessageGroups(trx, [message]);
      await insertMessageReferrals(trx, [message]);
      // The chat and the sender as a contact are written at the batch's end, with its other messages'.
      const notes = conversationNotes(batch);
      notes.messagesStored([message]);
      if (group === null) {
        const sender = {
          lid: message.fromLid,
          phone: message.fromPhone,
          messageAt: message.createdAt,
          ...(event.senderName !== undefined && { whatsappName: event.senderName }),
        };
        notes.senderHeard({ numberId: number.id, accountId: number.accountId }, sender, message.createdAt);
      }
      // The promise of a later message.media event commits with the message, or not at all.
      if (media !== undefined && 'unavailable' in media && media.willRetry && retryToken !== null) {
        await insertPendingDownload(trx, {
          messageId: message.id,
          accountId: number.accountId,
          numberId: number.id,
          kind: media.kind,
          fileName: event.media!.fileName,
          engineToken: retryToken,
          attempts: 1,
          lastReason: media.unavailable,
          nextAttemptAt: new Date(Date.now() + DOWNLOAD_RETRY_DELAYS_MS[0]!),
          createdAt: new Date(),
        });
      }
      return { message, queued: mergeQueued([learned, queued]), fresh: true };
    });
    this.notifier.deliveriesQueued(stored.queued);
    return { message: stored.message, number, fresh: stored.fresh };
  }

  /**
   * Fills in the sender's other identifier from the number's map, or teaches the map when the
   * message names both (Baileys' remoteJidAlt): no WhatsApp query either way.
   */
  private async identify(trx: Executor, number: WhatsAppNumber, event: IncomingMessageEvent, message: Message): Promise<Enqueued> {
    if (event.fromPhone !== null && event.fromLid !== null) {
      return learnAndReport(
        trx,
        this.notifier,
        number,
        { lid: event.fromLid, phone: event.fromPhone },
        event.identitySource ?? 'message',
        message.createdAt,
      );
    }
    const person = await completeIdentity(trx, number.id, { phone: event.fromPhone, lid: event.fromLid });
    message.fromPhone = person.phone;
    message.fromLid = person.lid;
    return NOTHING_QUEUED;
  }

  /**
   * Fetches and stores an incoming message's file before the message is written, so that the
   * message row never names missing bytes. A file that cannot be had within
   * WAGW_MEDIA_RECEIVE_TIMEOUT_MS does not hold the message back: it is stored without it, the
   * webhook says the media is unavailable and why, and the download is tried again later
   * (media-download-retrier.ts) when the failure may pass and the engine can fetch it again.
   */
  private storeMedia(accountId: string, incoming: IncomingMedia): Promise<ReceivedMedia> {
    return fetchIncomingFile(
      this.media,
      { accountId, kind: incoming.kind, fileName: incoming.fileName, start: () => incoming.download() },
      this.receiveTimeoutMs,
      incoming.retryToken !== null,
    );
  }

  /**
   * Receipts are written under the lease of the session that got them. One the fence refuses
   * (its number moved in the meantime, or this node was cut off) is reported as a stale write,
   * and is then applied all the same, without the fence: it is WhatsApp's word about a message,
   * true whichever session heard it, and a receipt only ever moves its row forward
   * (RECEIPT_TRANSITIONS), making its event only when it does, so a late one can neither undo
   * nor repeat anything. Dropping it would leave the message `sent` for good.
   */
  async recordReceipt(event: ReceiptEvent): Promise<void> {
    try {
      await this.applyReceipt(event, event.lease);
    } catch (error) {
      if (!(error instanceof StaleLeaseError)) throw error;
      this.onStaleWrite?.(error);
      await this.applyReceipt(event, undefined);
    }
  }

  /** `fence` is the lease the write is made under, or undefined for none. */
  private async applyReceipt(event: ReceiptEvent, fence: SessionLease | undefined): Promise<void> {
    // Only a failure has a reason; a code on a delivered or read receipt would mean nothing.
    const errorCode = event.status === 'failed' ? event.errorCode : null;
    const ours = await this.recentSends?.find(event.phone, event.engineMessageId);
    if (ours !== undefined) {
      // Its record has committed, so one attempt is the answer: a receipt it does not move is stale.
      const outcome = await this.committer.run(async (_trx, batch) => this.applyToRecordedSend(batch, ours, event, errorCode, fence));
      this.notifier.deliveriesQueued(outcome.value ?? NOTHING_QUEUED);
      return;
    }
    for (const delayMs of [0, ...RECEIPT_RETRY_DELAYS_MS]) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const applied = await this.committer.run(async (trx, batch) => {
        if (fence !== undefined) fenceLease(batch, fence);
        const transitions = RECEIPT_TRANSITIONS[event.status];
        const advanced = await advanceOutboundStatus(
          trx,
          { fromPhone: event.phone, engineMessageId: event.engineMessageId },
          event.status,
          transitions,
          event.at,
          errorCode,
        );
        if (advanced === undefined) return undefined;
        // The row names a group send's group but not its subject, which the event shows too.
        const group = advanced.group == null ? null : ((await findMessageGroups(trx, [advanced.id])).get(advanced.id) ?? advanced.group);
        return this.reportReceipt(trx, batch, { ...advanced, group }, event, errorCode);
      });
      if (applied !== undefined) {
        this.notifier.deliveriesQueued(applied);
        return;
      }
      // Known and past `queued` but not movable: a stale receipt, with nothing to wait for. One
      // that is movable now was recorded as sent after this receipt's attempt (in the same
      // group commit, say), so it is tried again.
      const current = await findOutboundStatus(this.store.db, { fromPhone: event.phone, engineMessageId: event.engineMessageId });
      if (current !== undefined && current !== 'queued' && !RECEIPT_TRANSITIONS[event.status].includes(current)) return;
    }
  }

  /**
   * The lean receipt: this node's own send, moved by primary key at the batch's end with the
   * batch's other receipts (status-writes.ts), its event made from memory.
   */
  private applyToRecordedSend(
    batch: EndOfBatch,
    send: RecordedSend,
    event: ReceiptEvent,
    errorCode: string | null,
    fence: SessionLease | undefined,
  ): BatchOutcome<Enqueued> {
    const row = { id: send.id, at: event.at.getTime(), errorCode };
    return queueStatusAdvance(batch, fence, event.status, RECEIPT_TRANSITIONS[event.status], row, (trx, end) =>
      this.reportReceipt(trx, end, send, event, errorCode),
    );
  }

  /** The receipt's event, and for a read one in a direct chat, the read of the chat's earlier sends with theirs. */
  private async reportReceipt(
    trx: Transaction<Database>,
    batch: EndOfBatch,
    message: RecordedSend,
    event: ReceiptEvent,
    errorCode: string | null,
  ): Promise<Enqueued> {
    const queued = await queueEvent(
      trx,
      batch,
      this.notifier,
      message.accountId,
      messageStatusPayload(message, event.status, errorCode, event.at),
      event.at,
    );
    // Read up to here means everything before it in a direct chat was read too; in a group,
    // one member's reading says nothing of the others.
    if (event.status !== 'read' || message.group !== null) return queued;
    const settled = await markEarlierRead(trx, message, event.at);
    const more = [];
    for (const earlier of settled)
      more.push(
        await queueEvent(
          trx,
          batch,
          this.notifier,
          earlier.accountId,
          messageStatusPayload({ ...earlier, group: null }, 'read', null, event.at),
          event.at,
        ),
      );
    return more.length === 0 ? queued : mergeQueued([queued, ...more]);
  }
}
