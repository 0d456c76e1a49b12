import { isOneEmoji } from '../domain/emoji.ts';
import { AppError } from '../domain/errors.ts';
import type { Message, QuotedMessage, WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import type { AccountScope } from '../domain/tenant-scope.ts';
import type { MessageAction, MessageRef } from '../engines/engine.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { markReceivedRead, reviseMessage, saveReaction } from '../store/repositories/conversations.ts';
import { findMessageById } from '../store/repositories/messages.ts';
import { clearUnreadThrough } from '../store/repositories/chats.ts';
import { findNumberById } from '../store/repositories/numbers.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/** WhatsApp lets a sent message be edited for 15 minutes. */
const EDIT_WINDOW_MS = 15 * 60_000;
/** And deleted for everyone for about two and a half days. */
const REVOKE_WINDOW_MS = 60 * 60 * 60_000;

/** The message as its chat knows it on the network. */
function messageRef(message: Message): MessageRef {
  const outbound = message.direction === 'outbound';
  if (message.group != null) {
    // In a group the chat is the group, and a member's message names its sender.
    return {
      chatPhone: outbound ? message.fromPhone! : message.toPhone,
      groupId: message.group.id,
      ...(!outbound && { participant: message.fromPhone ?? message.fromLid ?? undefined }),
      engineMessageId: message.engineMessageId!,
      fromMe: outbound,
      text: message.text,
    };
  }
  return {
    chatPhone: (outbound ? message.toPhone : message.fromPhone)!,
    engineMessageId: message.engineMessageId!,
    fromMe: outbound,
    text: message.text,
  };
}

/** A chat of one of our numbers: with a phone, or a group. */
export type Chat = { phone: E164; groupId?: undefined } | { groupId: string; phone?: undefined };

/**
 * The message `replyTo` names, if a send from `number` to `chat` may quote it: a message of
 * that very chat that made it onto the network. Anything else is the same 400, so that another
 * account's ids cannot be told from unknown ones.
 */
export async function findQuotable(
  store: Store,
  number: WhatsAppNumber,
  chat: Chat,
  replyTo: string,
): Promise<{ ref: MessageRef; quoted: QuotedMessage }> {
  const message = await findMessageById(store.db, replyTo);
  const peer = message === undefined ? undefined : message.direction === 'outbound' ? message.toPhone : message.fromPhone;
  const sameChat =
    message !== undefined &&
    (chat.groupId === undefined ? message.group == null && peer === chat.phone : message.group?.id === chat.groupId);
  if (
    message === undefined ||
    message.accountId !== number.accountId ||
    message.numberId !== number.id ||
    !sameChat ||
    message.engineMessageId === null
  ) {
    const where = chat.groupId === undefined ? `the chat between ${number.phone} and ${chat.phone}` : `group ${chat.groupId}`;
    throw new AppError('invalid_reply_to', `reply_to must be the message_id of a message in ${where}; ${replyTo} is not one.`, {
      field: 'reply_to',
    });
  }
  return { ref: messageRef(message), quoted: { messageId: message.id, engineMessageId: message.engineMessageId } };
}

/**
 * Reactions, edits, revocations and read marks on the account's messages, made through the
 * session of the message's number on the node that serves it (the routes forward them there).
 * Each is sent first and stored once WhatsApp took it, so that what is stored happened.
 */
export class MessageActionService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
  ) {}

  /** The account's message and the number whose chat holds it; `field` is where the request named it. */
  async locate(
    scope: AccountScope,
    messageId: string,
    field: 'id' | 'message_id' = 'message_id',
  ): Promise<{ message: Message; number: WhatsAppNumber | undefined }> {
    const message = await findMessageById(this.store.db, messageId);
    if (message === undefined || message.accountId !== scope.accountId)
      throw new AppError('message_not_found', `There is no message "${messageId.slice(0, 64)}" in your account.`, { field });
    const number = message.numberId === null ? undefined : await findNumberById(this.store.db, message.numberId);
    return { message, number };
  }

  async react(number: WhatsAppNumber, message: Message, emoji: string): Promise<{ reactedAt: Date }> {
    if (emoji !== '' && !isOneEmoji(emoji))
      throw new AppError('invalid_emoji', 'emoji must be exactly one emoji, or empty to remove your reaction.', { field: 'emoji' });
    if (message.numberId !== number.id || message.engineMessageId === null) {
      throw new AppError(
        'message_not_in_chat',
        `Message ${message.id} is not in a chat of ${number.phone}${message.engineMessageId === null ? ' (it was never sent)' : ''}.`,
        { field: 'message_id' },
      );
    }
    await this.act(number, message, { kind: 'react', emoji });
    const reactedAt = new Date();
    await this.committer.run((trx) => saveReaction(trx, message, { reactor: number.phone, fromUs: true, emoji, reactedAt }));
    return { reactedAt };
  }

  async edit(number: WhatsAppNumber, message: Message, text: string): Promise<Message> {
    assertOurs(message, EDIT_WINDOW_MS, 'edit_window_closed');
    if (message.contentKind !== 'text' && !['image', 'video', 'document'].includes(message.contentKind)) {
      throw notEditable('no_text', `Message ${message.id} is a ${message.contentKind}, which has no text to edit.`);
    }
    await this.act(number, message, { kind: 'edit', text });
    const at = new Date();
    const revised = await this.committer.run((trx) => reviseMessage(trx, message, { kind: 'edited', text, fromUs: true, at }));
    if (revised === undefined) throw notEditable('revoked', `Message ${message.id} was revoked meanwhile.`);
    return revised;
  }

  async revoke(number: WhatsAppNumber, message: Message): Promise<Message> {
    assertOurs(message, REVOKE_WINDOW_MS, 'revoke_window_closed');
    await this.act(number, message, { kind: 'revoke' });
    const at = new Date();
    const revised = await this.committer.run((trx) => reviseMessage(trx, message, { kind: 'revoked', fromUs: true, at }));
    if (revised === undefined) throw notEditable('revoked', `Message ${message.id} was already revoked.`);
    return revised;
  }

  /** Marks a received message and the unread ones before it in its chat read, and tells the sender. */
  async markRead(number: WhatsAppNumber, message: Message): Promise<Message[]> {
    if (message.direction !== 'inbound')
      throw notEditable('not_received', `Message ${message.id} was sent, not received; only received messages are marked read.`);
    const at = new Date();
    const marked = await this.committer.run(async (trx) => {
      const read = await markReceivedRead(trx, message, at);
      await clearUnreadThrough(trx, message);
      return read;
    });
    const toTell = marked.filter((each) => each.engineMessageId !== null && each.fromPhone !== null).map(messageRef);
    if (toTell.length > 0) await this.supervisor.sessionFor(number).markRead(toTell);
    return marked;
  }

  private async act(number: WhatsAppNumber, message: Message, action: MessageAction): Promise<void> {
    await this.supervisor.sessionFor(number).sendAction(messageRef(message), action);
  }
}

/** Only our own sent messages, not revoked and within WhatsApp's window, may be changed. */
function assertOurs(message: Message, windowMs: number, closed: 'edit_window_closed' | 'revoke_window_closed'): void {
  if (message.direction !== 'outbound')
    throw notEditable('not_ours', `Message ${message.id} was received; only messages you sent can be changed.`);
  if (message.engineMessageId === null) throw notEditable('not_sent', `Message ${message.id} was never sent (${message.status}).`);
  if (message.times?.revoked) throw notEditable('revoked', `Message ${message.id} was revoked.`);
  const sentAt = message.times?.sent ?? message.createdAt;
  if (Date.now() - sentAt.getTime() > windowMs) {
    const what = closed === 'edit_window_closed' ? 'edited' : 'revoked';
    throw new AppError(
      'message_not_editable',
      `Message ${message.id} was sent too long ago to be ${what}: WhatsApp allows ${Math.round(windowMs / 60_000)} minutes.`,
      { reason: closed, limit_seconds: windowMs / 1000 },
    );
  }
}

function notEditable(reason: string, message: string): AppError {
  return new AppError('message_not_editable', message, { reason });
}
