import type { Logger } from 'pino';
import type { WhatsAppNumber } from '../domain/model.ts';
import { CallReplyMeter } from '../domain/call-reply-meter.ts';
import { callPayload, type CallReport } from '../domain/event-payloads.ts';
import type { IncomingCallEvent } from '../engines/engine-events.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { enqueueEvent, type DeliveryNotifier } from '../webhooks/outbox.ts';
import type { SendMessageService } from './send-message.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/**
 * Calls to our numbers, as their sessions hear of them (ADR 0033). Each is reported to the
 * account's `call` subscribers; a number that rejects calls declines one as it rings, reports
 * that too, and sends the caller its reply text through the ordinary send path, so the reply
 * is a stored message with its own status like any other.
 */
export class CallService {
  private readonly replies = new CallReplyMeter();

  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
    private readonly sender: Pick<SendMessageService, 'send'>,
    private readonly logger: Logger,
  ) {}

  async record(event: IncomingCallEvent): Promise<void> {
    // Read afresh: the settings may have changed since the session started.
    const number = await findNumberByPhone(this.store.db, event.toPhone);
    if (number === undefined) throw new Error(`An engine reported a call to ${event.toPhone}, which this gateway does not hold.`);
    await this.report(number, event, false);
    if (event.status !== 'offered' || !number.rejectCalls) return;
    await this.supervisor.sessionFor(number).rejectCall(event.call);
    await this.report(number, { ...event, status: 'rejected', at: new Date() }, true);
    await this.replyToCaller(number, event);
  }

  private async report(number: WhatsAppNumber, event: IncomingCallEvent, byGateway: boolean): Promise<void> {
    const report: CallReport = { ...event, callId: event.call.callId, phone: number.phone, byGateway };
    const queued = await this.committer.run((trx) => enqueueEvent(trx, this.notifier, number.accountId, callPayload(report), event.at));
    this.notifier.deliveriesQueued(queued);
  }

  /**
   * The caller hears why nobody answered, once per CallReplyMeter's bounds (a caller who rings
   * again soon, or the number's hundredth caller of the hour, is not written to again). A caller
   * known only by LID is not written to: a send needs a phone. A reply that fails (no quota left, say) is logged; the call stays rejected.
   */
  private async replyToCaller(number: WhatsAppNumber, event: IncomingCallEvent): Promise<void> {
    if (number.callReplyText === null || number.callReplyText === '' || event.fromPhone === null) return;
    if (!this.replies.tryReply(number.id, event.fromPhone)) {
      this.logger.info(
        { numberId: number.id, callId: event.call.callId },
        'a rejected call was not replied to: the caller or the number had its replies',
      );
      return;
    }
    await this.sender
      .send({ number, toPhone: event.fromPhone, text: number.callReplyText })
      .catch((error: unknown) =>
        this.logger.warn({ err: error, numberId: number.id, callId: event.call.callId }, 'could not send the reply to a rejected call'),
      );
  }
}
