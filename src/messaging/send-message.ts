import { AppError, phoneNotOwned } from '../domain/errors.ts';
import type { MediaObject } from '../domain/media.ts';
import type { MediaService } from '../media/media-service.ts';
import { extendMediaRetention } from '../store/repositories/media.ts';
import { newId } from '../domain/ids.ts';
import type { Message, SessionLease, WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import { effectiveMonthlyLimit, type PlanName, usagePeriod } from '../domain/plans.ts';
import { EngineSendError, type MessageRef, type SentMessage } from '../engines/engine.ts';
import { findQuotable, type Chat } from './message-actions.ts';
import { notConnected, whatsAppRateLimited } from './session-refusals.ts';
import type { GroupService } from './groups.ts';
import type { SendHold } from '../domain/number-pauses.ts';
import { assertLeaseHeld, StaleLeaseError } from '../store/repositories/leases.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { sendableContent, structuredKind } from '../domain/structured-content.ts';
import { listInterruptedSends } from '../store/repositories/messages.ts';
import { queueRelease } from '../store/repositories/status-writes.ts';
import type { Logger } from 'pino';
import { queueMessageWithUnit } from '../store/repositories/send-units.ts';
import { monthlyUsed, releaseMonthlyUnit } from '../store/repositories/usage.ts';
import { messageStatusPayload } from '../domain/event-payloads.ts';
import { enqueueEvent, mergeQueued, type DeliveryNotifier, type Enqueued } from '../webhooks/outbox.ts';
import type { SessionSupervisor } from './session-supervisor.ts';
import { RecentSends } from './recent-sends.ts';
import { SendOutcomes, type EngineAnswer } from './send-outcomes.ts';
import { settleWaiting } from '../store/repositories/send-queue.ts';
import type { WaitingMessage } from '../store/repositories/waiting-messages.ts';
import type { SendGovernor } from './governor/send-governor.ts';
import { assertMembers, numberPaused, quotaExceeded } from './send-refusals.ts';
import type { QuotaTerms, SendCheck, SendOutcome, SendRequest } from './send-request.ts';

/**
 * The send use case, after authentication and body validation. Its order of checks is the API's
 * documented order: ownership (403), quota (429), session (503).
 */
export class SendMessageService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly supervisor: SessionSupervisor,
    private readonly notifier: DeliveryNotifier,
    private readonly media: MediaService,
    private readonly groups: GroupService,
    logger: Logger,
    private readonly governor: SendGovernor,
    /** Numbers that hold their sends (paused); none without it. */
    private readonly holds: SendHold | undefined,
    /** This node's sends, for their receipts (recent-sends.ts). */
    private readonly recentSends = new RecentSends(),
  ) {
    this.outcomes = new SendOutcomes(committer, notifier, logger, recentSends);
  }

  /** Where what became of each send is recorded. */
  private readonly outcomes: SendOutcomes;

  /**
   * Every check of a send that costs no more than reading the database (and a group's members,
   * which the session caches), with nothing written: ownership, send_at, reply_to, the session,
   * group membership and mentions, then the quota. A send that must fetch something (a preview,
   * a media.url) or store a file passes these first, so that a request bound to be refused
   * costs no outbound request and no write (issue 38, ADR 0055).
   */
  async assertSendable(request: SendCheck): Promise<void> {
    const { terms } = await this.checked(request);
    await this.assertQuotaLeft(terms);
  }

  async send(request: SendRequest): Promise<SendOutcome> {
    const { number, terms, quotable, held, policy, group } = await this.checked(request);
    const { at } = terms;
    const message: Message = {
      id: request.messageId ?? newId('message'),
      accountId: number.accountId,
      numberId: number.id,
      direction: 'outbound',
      fromPhone: number.phone,
      fromLid: null,
      toPhone: request.toPhone ?? number.phone,
      group: group === undefined ? null : { id: group.id, subject: group.subject },
      ...(request.toGroup !== undefined && { mentions: request.mentions }),
      text: request.text,
      contentKind: structuredKind(request.structured) ?? request.media?.kind ?? 'text',
      mediaId: request.media?.id ?? null,
      structured: request.structured ?? null,
      status: 'queued',
      engineMessageId: null,
      createdAt: at,
      replyTo: quotable?.quoted ?? null,
    };
    const media = request.media;
    if (policy === null) {
      // The governor is off: the unit and the row commit together, so a reserved unit always has
      // its message, and the row is durable before the engine is asked, so a crash never leaves
      // a send unaccounted. They are written at the end of the batch, with the batch's other
      // sends of the account.
      const admission = await this.committer.run(async (trx, batch) => {
        // A file a message uses is kept for the media retention from now, whatever it was before.
        if (media !== undefined) await extendMediaRetention(trx, media.id, new Date(at.getTime() + this.media.retentionMs));
        return queueMessageWithUnit(batch, message, terms);
      });
      if (!admission.admitted) throw quotaExceeded(terms, await monthlyUsed(this.store.db, terms.accountId, terms.period));
    } else {
      const options = {
        ...(request.toGroup !== undefined && { mentions: request.mentions }),
        ...(request.replyTo !== undefined && { reply_to: request.replyTo }),
      };
      const admission = await this.governor.admit(
        number,
        message,
        policy,
        terms,
        request.schedule,
        options,
        async (trx) => {
          // A waiting message's file must outlive its wait: kept for the retention after it expires.
          const keepFrom = Math.max(
            at.getTime(),
            request.schedule?.expiresAt?.getTime() ?? 0,
            (request.schedule?.sendAt?.getTime() ?? 0) + this.governor.config.defaultExpiryMs,
          );
          if (media !== undefined) await extendMediaRetention(trx, media.id, new Date(keepFrom + this.media.retentionMs));
        },
        held,
      );
      if (admission.kind === 'refused') throw quotaExceeded(terms, await monthlyUsed(this.store.db, terms.accountId, terms.period));
      if (admission.kind === 'queued')
        return {
          ...message,
          queue: { scheduledFor: admission.scheduledFor, expiresAt: admission.expiresAt, waitReason: admission.waitReason },
        };
    }

    let answeredAt: Date | undefined;
    const { engineMessageId, lease, pollSecret } = await this.handOverToEngine(
      number,
      message,
      terms.period,
      media,
      quotable?.ref,
      request.toGroup === undefined ? [] : request.mentions,
      request.linkPreviewThumbnail,
    ).finally(() => {
      answeredAt = new Date();
      // A governed number's next send keeps its gap from the engine's answer, not the decision.
      if (policy !== null) this.governor.engineAnswered(number.id, message.id, answeredAt);
    });
    const sentAt = answeredAt!;
    const sent: EngineAnswer = { message, engineMessageId, lease, quoted: quotable?.quoted, sentAt, pollSecret };
    this.notifier.deliveriesQueued(await this.record(sent));
    return {
      ...message,
      status: 'sent',
      engineMessageId,
      times: { sent: sentAt, delivered: null, read: null, failed: null, edited: null, revoked: null, unsent: null },
    };
  }

  /** A send's checks, in the documented order; see assertSendable. */
  private async checked(request: SendCheck) {
    const { number } = request;
    const terms = await this.termsOf(number);
    const { at } = terms;
    if (request.schedule !== undefined) this.governor.checkSchedule(request.schedule, at);
    // What the number's engine cannot carry is refused now, not when a queued message's time comes.
    this.supervisor.declineUncarried(number, request.structured);
    // A reply names a message of this very chat, or the request is wrong whatever else holds.
    const chat: Chat = request.toGroup === undefined ? { phone: request.toPhone } : { groupId: request.toGroup };
    const quotable = request.replyTo === undefined ? undefined : await findQuotable(this.store, number, chat, request.replyTo);
    await this.supervisor.untilStarted(number);
    const status = this.supervisor.sessionStatus(number);
    const held = this.holds?.holdOf(number.id) ?? null;
    const policy = this.governor.policyForSend(terms.policies, request.schedule, request.toGroup === undefined ? number.id : undefined);
    // A governed number's queue holds while it is paused: its sends wait there (202, wait_reason
    // paused) instead of being refused, and leave once it resumes. An ungoverned one answers 503.
    const waitsOutPause = held !== null && policy !== null;
    if (!waitsOutPause && (status !== 'connected' || held !== null)) {
      // Quota outranks the session in the error order, so look at it before saying 503.
      await this.assertQuotaLeft(terms);
      this.assertNotPaused(number);
      throw notConnected(number, status);
    }
    // Only the session knows the group's members (from its cache, so a send rarely asks WhatsApp).
    const group = request.toGroup === undefined ? undefined : await this.groups.asMember(number, request.toGroup, 'to_group');
    if (group !== undefined && request.toGroup !== undefined) assertMembers(group, request.mentions, number.phone);
    return { number, terms, quotable, held, policy, group };
  }

  /**
   * Sends a message the governor held, now that it is due: its waiting state is cleared under
   * the owner's lease first (queueRelease), so that a crash from here on leaves it `unknown`,
   * never sent twice; then the engine is asked as for any send. Returns the message as it ends
   * (sent, failed), or undefined when it had left the queue already (cancelled, expired, or
   * released by another owner). `message` is its row as read before the release: the release
   * itself checks that it still waits.
   */
  async sendReleased(number: WhatsAppNumber, waiting: WaitingMessage, message: Message, lease: SessionLease): Promise<Message | undefined> {
    // A number this node is giving up releases nothing more; what it released is waited for.
    const admitted = this.supervisor.admit(number.id);
    if (admitted === undefined) return undefined;
    try {
      return await this.sendReleasedAdmitted(number, waiting, message, lease);
    } finally {
      admitted();
    }
  }

  private async sendReleasedAdmitted(
    number: WhatsAppNumber,
    waiting: WaitingMessage,
    message: Message,
    lease: SessionLease,
  ): Promise<Message | undefined> {
    // Fenced and written with the batch's other releases, whichever numbers they are of.
    const released = await this.committer.run(async (_trx, batch) => queueRelease(batch, lease, waiting.id));
    if (released.value !== true) return undefined;
    const period = usagePeriod(message.createdAt);
    const chat: Chat = message.group == null ? { phone: message.toPhone } : { groupId: message.group.id };
    let quotable: Awaited<ReturnType<typeof findQuotable>> | undefined;
    let media: MediaObject | undefined;
    try {
      quotable =
        waiting.options?.reply_to === undefined ? undefined : await findQuotable(this.store, number, chat, waiting.options.reply_to);
      media = message.mediaId === null ? undefined : await this.media.find(message.accountId, message.mediaId);
    } catch (error) {
      await this.outcomes.markFailed(message, error instanceof AppError ? error.code : 'engine_error', period);
      return { ...message, status: 'failed' };
    }
    const mentions = (waiting.options?.mentions ?? []) as E164[];
    const {
      engineMessageId,
      lease: sentLease,
      pollSecret,
    } = await this.handOverToEngine(number, message, period, media, quotable?.ref, mentions);
    const sentAt = new Date();
    const sent: EngineAnswer = { message, engineMessageId, lease: sentLease, quoted: quotable?.quoted, sentAt, pollSecret };
    try {
      this.notifier.deliveriesQueued(await this.record(sent));
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'send_not_recorded') throw error;
      return { ...message, status: 'unknown' };
    }
    return { ...message, status: 'sent', engineMessageId };
  }

  /**
   * Records the engine's answer. A record the lease's fence refuses (the number moved after the
   * engine took the send) is reported as a stale write and then made without the fence, since
   * the engine's answer is known (SendOutcomes.recordSentAfterMove): the message is `sent`, and
   * the client's answer says so. A record the database will not take is `send_not_recorded`.
   */
  private async record(sent: EngineAnswer): Promise<Enqueued> {
    try {
      return await this.outcomes.recordSent(sent);
    } catch (error) {
      if (!(error instanceof StaleLeaseError)) throw await this.outcomes.sentButNotRecorded(sent, error);
      this.supervisor.staleWriteRefused(error);
    }
    try {
      return await this.outcomes.recordSentAfterMove(sent);
    } catch (error) {
      throw await this.outcomes.sentButNotRecorded(sent, error);
    }
  }

  /**
   * A waiting message leaves the queue without being sent: cancelled by its client, or past its
   * expires_at. Its unit goes back to the month it was taken from, and subscribers hear of it.
   * False when it had already left (sent, or settled by the other path).
   */
  async settleWaiting(
    message: Pick<Message, 'id' | 'accountId' | 'fromPhone' | 'toPhone' | 'direction' | 'group' | 'createdAt'>,
    status: 'cancelled' | 'expired',
    lease: SessionLease | undefined,
  ): Promise<boolean> {
    return (await this.settleWaitingMany([message], status, lease)).size > 0;
  }

  /**
   * settleWaiting for many messages in one transaction (one commit, one lease check), as a clear
   * of a long queue needs; returns the ids that were still waiting and are now settled.
   */
  async settleWaitingMany(
    messages: readonly Pick<Message, 'id' | 'accountId' | 'fromPhone' | 'toPhone' | 'direction' | 'group' | 'createdAt'>[],
    status: 'cancelled' | 'expired',
    lease: SessionLease | undefined,
  ): Promise<Set<string>> {
    const at = new Date();
    const settled = new Set<string>();
    const queued = await this.committer.run(async (trx) => {
      if (lease !== undefined) await assertLeaseHeld(trx, this.store.dialect, lease);
      const parts: Enqueued[] = [];
      for (const message of messages) {
        if (!(await settleWaiting(trx, message.id, status, at))) continue;
        settled.add(message.id);
        await releaseMonthlyUnit(trx, message.accountId, usagePeriod(message.createdAt));
        parts.push(await enqueueEvent(trx, this.notifier, message.accountId, messageStatusPayload(message, status, null, at), at));
      }
      return mergeQueued(parts);
    });
    this.notifier.deliveriesQueued(queued);
    return settled;
  }

  /**
   * Marks sends that were cut off (a crash, a database that would not write) between the row's
   * commit and the record of the engine's answer. Whether the engine took them cannot be known
   * here, so they become `unknown` (interrupted),
   * not failed; their clients never got a 200, and their units go back to the account. Only
   * rows older than `olderThan` are touched, so that a send still in flight in another process
   * sharing the database is left to finish.
   */
  async failInterruptedSends(olderThan: Date): Promise<number> {
    const interrupted = await listInterruptedSends(this.store.db, olderThan);
    for (const send of interrupted) {
      await this.outcomes.markInterrupted(send, usagePeriod(new Date(send.createdAt)));
    }
    return interrupted.length;
  }

  private async handOverToEngine(
    number: WhatsAppNumber,
    message: Message,
    period: string,
    media: MediaObject | undefined,
    replyTo: MessageRef | undefined,
    mentions: readonly E164[],
    linkPreviewThumbnail?: Buffer,
  ): Promise<SentMessage> {
    const structured = sendableContent(message.structured);
    const content = {
      text: message.text,
      ...(media !== undefined && { media: this.media.outgoing(media) }),
      ...(structured !== undefined && { structured }),
      ...(linkPreviewThumbnail !== undefined && { linkPreviewThumbnail }),
      ...(replyTo !== undefined && { replyTo }),
    };
    // Its receipts wait for its record from here (recordSent ends the wait).
    this.recentSends.began(number.phone, message.id);
    try {
      return await this.supervisor.sendMessage(
        number,
        message.group == null ? { toPhone: message.toPhone, ...content } : { toGroup: message.group.id, mentions, ...content },
      );
    } catch (error) {
      this.recentSends.ended(number.phone, message.id);
      const errorCode = error instanceof EngineSendError ? error.failure : 'engine_error';
      await this.outcomes.markFailed(message, errorCode, period);
      if (error instanceof EngineSendError && error.failure === 'recipient_not_on_whatsapp') {
        throw new AppError('recipient_not_on_whatsapp', `${message.toPhone} does not use WhatsApp, so the message cannot be delivered.`, {
          field: 'to_phone',
        });
      }
      if (error instanceof EngineSendError && error.failure === 'rate_limited') {
        throw whatsAppRateLimited(number);
      }
      // The engine paused the number before refusing; the send is answered as any send while paused.
      if (error instanceof EngineSendError && error.failure === 'restricted') this.assertNotPaused(number);
      if (error instanceof EngineSendError && error.failure === 'not_group_member' && message.group != null) {
        throw await this.groups.notMember(number, message.group.id, 'to_group');
      }
      if (error instanceof EngineSendError) {
        throw notConnected(number, error.sessionStatus ?? this.supervisor.sessionStatus(number));
      }
      throw error;
    }
  }

  /**
   * This month's quota terms of the number's account, and its send policies: read from the
   * lookup the dispatch resolved the number through (store/cached-lookups.ts), so no query of its
   * own while that entry is fresh.
   */
  private async termsOf(number: WhatsAppNumber): Promise<QuotaTerms> {
    const found = await this.store.lookups.numberWithPlan(number.phone);
    // The number left the account, or the gateway, since the request was dispatched.
    if (found === undefined || found.number.id !== number.id) {
      throw phoneNotOwned();
    }
    const at = new Date();
    const plan = found.plan as PlanName;
    return {
      accountId: number.accountId,
      plan,
      limit: effectiveMonthlyLimit(plan, found.customMonthlyLimit),
      period: usagePeriod(at),
      at,
      policies: found.sendPolicies,
    };
  }

  /** 503 number_paused while the number holds its sends, with Retry-After when the lift time is known. */
  private assertNotPaused(number: WhatsAppNumber): void {
    const held = this.holds?.holdOf(number.id) ?? null;
    if (held !== null) throw numberPaused(number, held);
  }

  private async assertQuotaLeft(terms: QuotaTerms): Promise<void> {
    if (terms.limit === null) return;
    const used = await monthlyUsed(this.store.db, terms.accountId, terms.period);
    if (used >= terms.limit) throw quotaExceeded(terms, used);
  }
}
