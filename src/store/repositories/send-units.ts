import type { Transaction } from 'kysely';
import type { Message } from '../../domain/model.ts';
import type { BatchStep, BatchStepKind, EndOfBatch } from '../group-commit.ts';
import type { Database } from '../schema.ts';
import { insertMessages } from './message-batches.ts';
import { conversationNotes } from './conversation-notes.ts';
import { insertMessageWithUnit } from './messages.ts';
import { takeMonthlyUnits } from './usage.ts';
import { insertMessageGroups } from './groups.ts';
import { type GovernedFields, setGovernedFields } from './send-queue.ts';

export interface UnitTerms {
  period: string;
  /** The account's monthly limit; null for unlimited, which still counts. */
  limit: number | null;
}

/** Whether a send got its unit (and so its row); known once its batch has finished. */
export class UnitAdmission {
  private decided: boolean | undefined;

  decide(admitted: boolean): void {
    this.decided = admitted;
  }

  get admitted(): boolean {
    if (this.decided === undefined) throw new Error("A send's admission was read before its batch finished.");
    return this.decided;
  }
}

/**
 * Queues a send's message row with a unit of its account's monthly volume, to be written at the
 * end of the group-commit batch the caller's work runs in. The row is stored only if the unit
 * was taken, and both commit together, as a single send's would.
 *
 * Sends of one account in one batch take their units in one statement, and within the batch
 * the earliest queued are admitted first. On PostgreSQL every send used to take the account's
 * usage row lock in its own statement and keep it until its batch committed, so batches of one
 * account, which commit side by side on the pool, queued behind each other for their whole
 * length; now each holds the lock from its last statements to its commit.
 */
export function queueMessageWithUnit(batch: EndOfBatch, message: Message, terms: UnitTerms, governed?: GovernedFields): UnitAdmission {
  return batch.step(SEND_UNITS).add(message, terms, governed);
}

interface AccountSends {
  accountId: string;
  terms: UnitTerms;
  messages: Message[];
  admissions: UnitAdmission[];
}

class SendUnits implements BatchStep {
  private readonly byAccount = new Map<string, AccountSends>();
  /** What the governor decided for the governed sends of the batch, written once their rows are stored. */
  private readonly governed = new Map<string, GovernedFields>();

  add(message: Message, terms: UnitTerms, governed: GovernedFields | undefined): UnitAdmission {
    if (governed !== undefined) this.governed.set(message.id, governed);
    // A limit changed between two sends of one batch gives them groups of their own.
    const key = `${message.accountId}\u0000${terms.period}\u0000${terms.limit}`;
    let sends = this.byAccount.get(key);
    if (sends === undefined) {
      sends = { accountId: message.accountId, terms, messages: [], admissions: [] };
      this.byAccount.set(key, sends);
    }
    const admission = new UnitAdmission();
    sends.messages.push(message);
    sends.admissions.push(admission);
    return admission;
  }

  async finish(trx: Transaction<Database>, batch: EndOfBatch): Promise<void> {
    // Accounts in one order, so that batches taking several accounts' usage rows never deadlock.
    const accounts = [...this.byAccount.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, sends]) => sends);
    for (const { accountId, terms, messages, admissions } of accounts) {
      let admitted: Message[];
      if (messages.length === 1) {
        // Alone, the unit and the row are one statement on PostgreSQL: the fewest round trips.
        const alone = await insertMessageWithUnit(trx, messages[0]!, terms);
        admissions[0]!.decide(alone);
        admitted = alone ? messages : [];
      } else {
        const taken = await takeMonthlyUnits(trx, accountId, terms.period, terms.limit, messages.length);
        admitted = messages.slice(0, taken);
        await insertMessages(trx, admitted);
        admissions.forEach((admission, index) => {
          admission.decide(index < taken);
        });
      }
      const decided = new Map<string, GovernedFields>();
      for (const message of admitted) {
        const fields = this.governed.get(message.id);
        if (fields !== undefined) decided.set(message.id, fields);
      }
      await setGovernedFields(trx, decided);
      // A group send names its group from the start, so that even a failed one shows where it went.
      await insertMessageGroups(trx, admitted);
      // The chat list and the contact list move with the messages, in the same commit.
      conversationNotes(batch).messagesStored(admitted);
    }
  }
}

const SEND_UNITS: BatchStepKind<SendUnits> = { rank: 1, create: () => new SendUnits() };
