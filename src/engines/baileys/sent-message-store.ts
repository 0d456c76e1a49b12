import type { proto } from 'baileys';

/**
 * The last messages this number sent, by WhatsApp id, for Baileys' `getMessage`: when a
 * recipient's phone could not decrypt a message it asks for it again, and without the content
 * the retry fails and the message is lost. Bounded, so a busy number does not grow without end;
 * retries come within seconds, so the recent ones are the ones that matter.
 */
export class SentMessageStore {
  private readonly messages = new Map<string, proto.IMessage>();

  constructor(private readonly capacity: number) {}

  remember(id: string, message: proto.IMessage): void {
    this.messages.delete(id);
    this.messages.set(id, message);
    if (this.messages.size > this.capacity) {
      const oldest = this.messages.keys().next().value;
      if (oldest !== undefined) this.messages.delete(oldest);
    }
  }

  get(id: string): proto.IMessage | undefined {
    return this.messages.get(id);
  }
}
