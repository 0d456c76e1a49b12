import { messageEditedPayload, messageReactionPayload, messageRevokedPayload, type MessageChange } from '../domain/event-payloads.ts';
import type { IncomingActionEvent } from '../engines/engine-events.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findByEngineId, reviseMessage, saveReaction } from '../store/repositories/conversations.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { knownSubject } from '../store/repositories/groups.ts';
import { completeIdentity } from './identities.ts';
import { enqueueEvent, NOTHING_QUEUED, type DeliveryNotifier } from '../webhooks/outbox.ts';

/**
 * Reactions, edits and revocations that arrive in our numbers' chats. Each is stored on its
 * message when we have it (the history keeps the replaced text) and reported to the account's
 * webhooks in the same commit; one on a message we never stored is still reported, by
 * WhatsApp's id alone. A redelivered one changes nothing and is not reported twice.
 */
export class IncomingActionService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
  ) {}

  async record(event: IncomingActionEvent): Promise<void> {
    const number = await findNumberByPhone(this.store.db, event.toPhone);
    if (number === undefined)
      throw new Error(`An engine reported a change in a chat of ${event.toPhone}, which this gateway does not hold.`);
    const queued = await this.committer.run(async (trx) => {
      const target = await findByEngineId(trx, number.id, event.targetEngineId);
      // A change in a group says so, with the subject the number knows the group by.
      const group =
        event.groupId === undefined ? null : { id: event.groupId, subject: (await knownSubject(trx, number.id, event.groupId)) ?? null };
      // The actor as one person: a LID the number's map knows is given its phone, and a phone its LID.
      const actor = event.fromMe
        ? { phone: event.actorPhone, lid: event.actorLid }
        : await completeIdentity(trx, number.id, { phone: event.actorPhone, lid: event.actorLid });
      const change: MessageChange = {
        messageId: target?.id ?? null,
        whatsappId: event.targetEngineId,
        phone: number.phone,
        group,
        byPhone: actor.phone,
        byLid: actor.lid,
        fromMe: event.fromMe,
        at: event.at,
      };
      const enqueue = (payload: Parameters<typeof enqueueEvent>[3]) =>
        enqueueEvent(trx, this.notifier, number.accountId, payload, event.at);
      const { action } = event;
      if (action.kind === 'react') {
        const reactor = actor.phone ?? actor.lid;
        if (target !== undefined && reactor !== null)
          await saveReaction(trx, target, { reactor, fromUs: event.fromMe, emoji: action.emoji, reactedAt: event.at });
        return enqueue(messageReactionPayload(change, action.emoji));
      }
      if (target === undefined)
        return enqueue(action.kind === 'edit' ? messageEditedPayload(change, action.text, null) : messageRevokedPayload(change));
      // The same edit again (a redelivery, or our own edit echoed by our phone) is no news.
      if (action.kind === 'edit' && target.text === action.text && target.times?.edited) return NOTHING_QUEUED;
      const revised = await reviseMessage(
        trx,
        target,
        action.kind === 'edit'
          ? { kind: 'edited', text: action.text, fromUs: event.fromMe, at: event.at }
          : { kind: 'revoked', fromUs: event.fromMe, at: event.at },
      );
      if (revised === undefined) return NOTHING_QUEUED;
      return enqueue(action.kind === 'edit' ? messageEditedPayload(change, action.text, target.text) : messageRevokedPayload(change));
    });
    this.notifier.deliveriesQueued(queued);
  }
}
