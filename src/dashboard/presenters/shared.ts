import { senderAddress, type Message, type User, type WhatsAppNumber } from '../../domain/model.ts';

/** A message as every page lists it. */
export interface MessageRowView {
  id: string;
  direction: 'outbound' | 'inbound';
  counterpart: string;
  ownPhone: string;
  text: string;
  /** The file the message carries, downloaded through the session (never with an API key). */
  media: { href: string; kind: string; picture: boolean } | undefined;
  status: string;
  at: Date;
  /** "deleted" once revoked (the text is then empty), "edited" after an edit, else nothing. */
  change: 'edited' | 'deleted' | undefined;
  /** The group chat of a group message, by its subject (its id when the subject is unknown). */
  group: string | undefined;
}

export function toMessageRow(message: Message): MessageRowView {
  const outbound = message.direction === 'outbound';
  return {
    id: message.id,
    direction: message.direction,
    // An inbound sender known only by LID is shown by its LID; a message we sent to a group, by the group.
    counterpart: outbound ? (message.group == null ? message.toPhone : 'group') : senderAddress(message),
    ownPhone: outbound ? senderAddress(message) : message.toPhone,
    text: message.text,
    media:
      message.mediaId === null
        ? undefined
        : {
            href: `/messages/media/${encodeURIComponent(message.mediaId)}`,
            kind: message.contentKind,
            picture: message.contentKind === 'image' || message.contentKind === 'sticker',
          },
    status: message.status,
    at: message.createdAt,
    change: message.times?.revoked ? 'deleted' : message.times?.edited ? 'edited' : undefined,
    group: message.group == null ? undefined : message.group.subject || message.group.id,
  };
}

export interface NumberRowView {
  id: string;
  phone: string;
  engine: string;
  status: string;
  statusReason: string | null;
  holder: string | null;
  isSandbox: boolean;
  rejectCalls: boolean;
  callReplyText: string | null;
}

export function toNumberRow(number: WhatsAppNumber, usersById: Map<string, User>): NumberRowView {
  return {
    id: number.id,
    phone: number.phone,
    engine: number.engine,
    status: number.status,
    statusReason: number.statusReason,
    holder: number.holderUserId === null ? null : (usersById.get(number.holderUserId)?.email ?? null),
    isSandbox: number.engine === 'sandbox',
    rejectCalls: number.rejectCalls,
    callReplyText: number.callReplyText,
  };
}

export function usersById(users: User[]): Map<string, User> {
  return new Map(users.map((user) => [user.id, user]));
}

export function planLabel(plan: string): string {
  return plan.charAt(0).toUpperCase() + plan.slice(1);
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** One option of a select: the value sent and the words shown. */
export interface Choice {
  value: string;
  label: string;
}
