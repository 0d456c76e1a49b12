import type { Logger } from 'pino';
import type { Message } from '../domain/model.ts';
import { pollOf, tallyPoll, type PollTally } from '../domain/structured-content.ts';
import { pollVotePayload } from '../domain/event-payloads.ts';
import type { IncomingPollVoteEvent } from '../engines/engine-events.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findByEngineId } from '../store/repositories/conversations.ts';
import { knownSubject } from '../store/repositories/groups.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { findPollSecret, listSelections, listSelectionsOf, saveSelection } from '../store/repositories/polls.ts';
import type { Executor } from '../store/database.ts';
import { enqueueEvent, NOTHING_QUEUED, type DeliveryNotifier } from '../webhooks/outbox.ts';

/**
 * Votes on the polls of our numbers' chats. Each voter's latest selection is kept (a vote
 * replaces the one before, an empty one removes it), and a change is reported as `poll.vote`
 * with the totals, in the same commit. A vote on a poll we never stored cannot be read (its
 * options and secret are the poll's) and is dropped, as is one delivered again.
 */
export class PollService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly logger: Logger,
  ) {}

  async recordVote(event: IncomingPollVoteEvent): Promise<void> {
    const number = await findNumberByPhone(this.store.db, event.toPhone);
    if (number === undefined) throw new Error(`An engine reported a poll vote for ${event.toPhone}, which this gateway does not hold.`);
    const voter = event.voterLid ?? event.voterPhone;
    if (voter === null) return;
    const queued = await this.committer.run(async (trx) => {
      const message = await findByEngineId(trx, number.id, event.pollEngineId);
      const poll = message === undefined ? undefined : pollOf(message.structured);
      if (message === undefined || poll === undefined) {
        this.logger.debug({ pollEngineId: event.pollEngineId }, 'a vote on a poll this gateway does not hold was dropped');
        return NOTHING_QUEUED;
      }
      const chosen = event.selectedOptions({ secret: (await findPollSecret(trx, message.id)) ?? null, options: poll.options });
      if (chosen === undefined) {
        this.logger.warn({ messageId: message.id }, "a poll vote could not be decrypted with the poll's secret; it was dropped");
        return NOTHING_QUEUED;
      }
      const options = poll.options.filter((option) => chosen.includes(option));
      const changed = await saveSelection(trx, message.id, {
        voter,
        voterPhone: event.voterPhone,
        voterLid: event.voterLid,
        options,
        votedAt: event.at,
      });
      if (!changed) return NOTHING_QUEUED;
      const group =
        event.groupId === undefined ? null : { id: event.groupId, subject: (await knownSubject(trx, number.id, event.groupId)) ?? null };
      const vote = {
        messageId: message.id,
        whatsappId: event.pollEngineId,
        phone: number.phone,
        group,
        voterPhone: event.voterPhone,
        voterLid: event.voterLid,
        options,
        at: event.at,
      };
      return enqueueEvent(
        trx,
        this.notifier,
        number.accountId,
        pollVotePayload(vote, poll, await tallyOf(trx, message.id, poll)),
        event.at,
      );
    });
    this.notifier.deliveriesQueued(queued);
  }

  /** The tally of a message that is a poll; undefined for any other message. */
  async tally(message: Message): Promise<PollTally | undefined> {
    return (await this.talliesOf([message])).get(message.id);
  }

  /** The tallies of those of the messages that are polls, by id: one query for the lot (none without a poll). */
  async talliesOf(messages: readonly Message[]): Promise<Map<string, PollTally>> {
    const polls = messages.flatMap((message) => {
      const poll = pollOf(message.structured);
      return poll === undefined ? [] : [{ id: message.id, poll }];
    });
    const selections = await listSelectionsOf(
      this.store.db,
      polls.map(({ id }) => id),
    );
    return new Map(
      polls.map(({ id, poll }) => [
        id,
        tallyPoll(
          poll,
          (selections.get(id) ?? []).map((selection) => selection.options),
        ),
      ]),
    );
  }
}

async function tallyOf(db: Executor, messageId: string, poll: NonNullable<ReturnType<typeof pollOf>>): Promise<PollTally> {
  return tallyPoll(
    poll,
    (await listSelections(db, messageId)).map((selection) => selection.options),
  );
}
