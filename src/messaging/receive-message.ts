import { newId } from '../domain/ids.ts';
import type { Message } from '../domain/model.ts';
import type { IncomingMessageEvent } from '../engines/engine.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { insertMessage } from '../store/repositories/messages.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';

/** Stores what engines receive. Incoming messages never count against the monthly volume. */
export class ReceiveMessageService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
  ) {}

  async receive(event: IncomingMessageEvent): Promise<Message> {
    const number = await findNumberByPhone(this.store.db, event.toPhone);
    if (number === undefined) {
      throw new Error(`An engine reported a message for ${event.toPhone}, which this gateway does not hold.`);
    }
    const message: Message = {
      id: newId('message'),
      accountId: number.accountId,
      numberId: number.id,
      direction: 'inbound',
      fromPhone: event.fromPhone,
      toPhone: number.phone,
      text: event.text,
      status: 'received',
      engineMessageId: event.engineMessageId,
      createdAt: event.receivedAt,
    };
    await this.committer.run((trx) => insertMessage(trx, message));
    return message;
  }
}
