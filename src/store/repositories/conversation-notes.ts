import type { Transaction } from 'kysely';
import type { PersonIdentity } from '../../domain/identities.ts';
import type { Message } from '../../domain/model.ts';
import type { BatchStep, BatchStepKind, EndOfBatch } from '../group-commit.ts';
import type { Database } from '../schema.ts';
import { noteChatMessages } from './chats.ts';
import { noteContact, noteRecipients, type NumberRef } from './contacts.ts';

type Sender = PersonIdentity & { whatsappName?: string | null; messageAt?: Date };
interface HeardSender {
  number: NumberRef;
  sender: Sender;
  at: Date;
}

/**
 * What a batch's stored messages change in the chat list and the contact list, written at the
 * batch's end after the monthly units (send-units.ts): the chats in one statement, the contacts
 * by key. Chats and contacts are rows that many messages share (a busy chat, a customer who
 * writes to several of an account's numbers), so they are locked last and in one order.
 */
class ConversationNotes implements BatchStep {
  private readonly messages: Message[] = [];
  private readonly senders: HeardSender[] = [];

  /** Moves the messages' chats on; a direct message we sent also notes its recipient as a contact. */
  messagesStored(messages: readonly Message[]): void {
    this.messages.push(...messages);
  }

  /** Notes the sender of a direct message we received as a contact of the number. */
  senderHeard(number: NumberRef, sender: Sender, at: Date): void {
    this.senders.push({ number, sender, at });
  }

  async finish(trx: Transaction<Database>): Promise<void> {
    await noteChatMessages(trx, this.messages);
    const notes: { key: string; recipient?: Message; heard?: HeardSender }[] = [
      ...this.messages
        .filter((message) => message.direction === 'outbound' && message.group == null && message.numberId !== null)
        .map((message) => ({ key: `${message.numberId} ${message.toPhone}`, recipient: message })),
      ...this.senders.map((heard) => ({ key: `${heard.number.numberId} ${heard.sender.phone ?? heard.sender.lid}`, heard })),
    ];
    notes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    // Runs of recipients go in one statement each, between the senders, keeping the key order.
    let recipients: Message[] = [];
    for (const note of notes) {
      if (note.recipient !== undefined) {
        recipients.push(note.recipient);
        continue;
      }
      await noteRecipients(trx, recipients);
      recipients = [];
      const { number, sender, at } = note.heard!;
      await noteContact(trx, number, sender, at);
    }
    await noteRecipients(trx, recipients);
  }
}

const CONVERSATION_NOTES: BatchStepKind<ConversationNotes> = { rank: 2, create: () => new ConversationNotes() };

/** The batch's notes of chats and contacts, written at its end (see ConversationNotes). */
export function conversationNotes(batch: EndOfBatch): ConversationNotes {
  return batch.step(CONVERSATION_NOTES);
}
