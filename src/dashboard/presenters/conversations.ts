import { createHash } from 'node:crypto';
import { AppError } from '../../domain/errors.ts';
import { senderAddress, type Message, type WhatsAppNumber } from '../../domain/model.ts';
import type { PollTally, SharedContact, SharedLocation } from '../../domain/structured-content.ts';
import type { NamedChat } from '../../messaging/chats.ts';
import type { MessageChanges } from '../../messaging/message-history.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { ScopedAccount } from '../context.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'chats' | 'history' | 'numbers' | 'polls'>;

/** The chat list's length: the latest chats; a search finds older ones. */
const CHATS_LISTED = 100;
/** The thread's length: the latest messages of the chat, oldest first. */
const THREAD_MESSAGES = 60;

interface ChatListItemView {
  href: string;
  /** The name the chat goes by, else its phone or group id. */
  title: string;
  /** The phone (or group id) under a name; null when the title is it already. */
  subtitle: string | null;
  numberPhone: string;
  isGroup: boolean;
  preview: string;
  previewOutbound: boolean;
  lastAt: Date;
  unread: number;
}

export interface ChatsView {
  search: string;
  chats: ChatListItemView[];
  hasNumbers: boolean;
}

export async function presentChats(gateway: Services, account: ScopedAccount, search: string): Promise<ChatsView> {
  const numbers = await gateway.numbers.listNumbers(account.scope);
  const phones = new Map(numbers.map((number) => [number.id, number.phone]));
  const chats = await gateway.chats.named(account.scope, numbers, search === '' ? undefined : search, CHATS_LISTED);
  return { search, hasNumbers: numbers.length > 0, chats: chats.map((chat) => toChatListItem(chat, phones.get(chat.numberId) ?? '')) };
}

function toChatListItem(chat: NamedChat, numberPhone: string): ChatListItemView {
  const address = chat.group?.id ?? chat.phone ?? chat.lid ?? chat.chatId;
  return {
    href: conversationHref(chat.numberId, chat.chatId),
    title: chat.name ?? address,
    subtitle: chat.name === null ? null : address,
    numberPhone,
    isGroup: chat.group !== null,
    preview: previewOf(chat.lastMessage),
    previewOutbound: chat.lastMessage.direction === 'outbound',
    lastAt: chat.lastActivityAt,
    unread: chat.markedUnread ? Math.max(chat.unreadCount, 1) : chat.unreadCount,
  };
}

function conversationHref(numberId: string, chatId: string): string {
  return `/conversations/${encodeURIComponent(numberId)}/${encodeURIComponent(chatId)}`;
}

/** A message's one line in the chat list: its text, or what it carries. */
function previewOf(message: Message): string {
  if (message.times?.revoked) return 'This message was deleted';
  if (message.text !== '') return message.text.length > 120 ? `${message.text.slice(0, 119)}…` : message.text;
  const structured = message.structured;
  if (structured !== null && 'poll' in structured) return `Poll: ${structured.poll.question}`;
  if (structured !== null && 'location' in structured) return `Location${structured.location.name ? `: ${structured.location.name}` : ''}`;
  if (structured !== null && 'contacts' in structured) return `Contact: ${structured.contacts.map((contact) => contact.name).join(', ')}`;
  return message.contentKind.replace(/_caption$/, '').replace(/_/g, ' ');
}

/** One message of the thread as a bubble shows it. */
export interface BubbleView {
  id: string;
  direction: 'outbound' | 'inbound';
  /** Who wrote it, in a group chat (its sender's phone or LID); null in a direct chat or for ours. */
  sender: string | null;
  text: string;
  media: { href: string; kind: string; picture: boolean } | undefined;
  status: string;
  at: Date;
  deleted: boolean;
  /** The texts it had before its edits, oldest first; empty when never edited. */
  earlierTexts: string[];
  /** What it answers: the quoted message's text (or kind), or null when that message is not stored here. */
  quoted: { text: string } | null | undefined;
  reactions: { emoji: string; count: number }[];
  poll: { question: string; voters: number; options: { option: string; votes: number }[] } | undefined;
  location: (SharedLocation & { mapHref: string }) | undefined;
  contacts: SharedContact[] | undefined;
}

export interface ConversationView {
  numberId: string;
  numberPhone: string;
  chatId: string;
  title: string;
  subtitle: string | null;
  isGroup: boolean;
  bubbles: BubbleView[];
  /** Owners and admins reply; members read (ADR 0073). */
  canReply: boolean;
  href: string;
  /** What the page's script polls for the thread as it changes. */
  threadHref: string;
  /** A fingerprint of the thread as shown: the script replaces it only when this changes. */
  version: string;
  draft: string;
  /** A fresh key for the next reply, so that a form sent twice sends once. */
  replyKey: string;
  error: string | undefined;
}

/** The chat's thread, by the number and chat id its link names; another account's is not found. */
export async function presentConversation(
  gateway: Services,
  account: ScopedAccount,
  numberId: string,
  rawChat: string,
  canReply: boolean,
): Promise<ConversationView> {
  const number = await ownNumber(gateway, account, numberId);
  const chat = await gateway.chats.findNamed(number, rawChat);
  const address = chat.group?.id ?? chat.phone ?? chat.lid ?? chat.chatId;
  const name = chat.name;
  const bubbles = await threadBubbles(gateway, account, number, chat.group?.id, chat.phone ?? chat.lid ?? chat.chatId);
  return {
    numberId: number.id,
    numberPhone: number.phone,
    chatId: chat.chatId,
    title: name ?? address,
    subtitle: name === null ? null : address,
    isGroup: chat.group !== null,
    bubbles,
    canReply,
    href: conversationHref(number.id, chat.chatId),
    threadHref: `${conversationHref(number.id, chat.chatId)}/thread`,
    version: threadVersion(bubbles),
    draft: '',
    replyKey: newReplyKey(),
    error: undefined,
  };
}

/** The thread alone, for the page's script: its bubbles and their fingerprint. */
export async function presentThread(
  gateway: Services,
  account: ScopedAccount,
  numberId: string,
  rawChat: string,
): Promise<{ bubbles: BubbleView[]; version: string }> {
  const number = await ownNumber(gateway, account, numberId);
  const chat = await gateway.chats.find(number, rawChat);
  const bubbles = await threadBubbles(gateway, account, number, chat.group?.id, chat.phone ?? chat.lid ?? chat.chatId);
  return { bubbles, version: threadVersion(bubbles) };
}

/** Where a reply goes: the number and the chat alone, without the thread a page shows. */
export async function presentReplyTarget(
  gateway: Services,
  account: ScopedAccount,
  numberId: string,
  rawChat: string,
): Promise<{ numberPhone: string; chatId: string; isGroup: boolean; href: string }> {
  const number = await ownNumber(gateway, account, numberId);
  const chat = await gateway.chats.find(number, rawChat);
  return { numberPhone: number.phone, chatId: chat.chatId, isGroup: chat.group !== null, href: conversationHref(number.id, chat.chatId) };
}

/** A fresh key for a reply, so that a form sent twice sends once. */
export function newReplyKey(): string {
  return `dashboard:${crypto.randomUUID()}`;
}

/** The account's number by the id its link names; a phone in its place, or another account's number, is not found. */
async function ownNumber(gateway: Services, account: ScopedAccount, numberId: string): Promise<WhatsAppNumber> {
  const number = await gateway.numbers.findNumber(account.scope, numberId).catch((error: unknown) => {
    if (error instanceof AppError && error.code === 'number_not_found') return undefined;
    throw error;
  });
  if (number?.id !== numberId) throw new AppError('number_not_found', 'Your account has no such number.', { field: 'number_id' });
  return number;
}

async function threadBubbles(
  gateway: Services,
  account: ScopedAccount,
  number: WhatsAppNumber,
  groupId: string | undefined,
  person: string,
): Promise<BubbleView[]> {
  const page = await gateway.history.page(account.scope, {
    numberId: number.id,
    ...(groupId === undefined ? { with: person } : { groupId }),
    limit: THREAD_MESSAGES,
  });
  // A direct chat is the person's own messages: what they wrote in a group belongs to the group's.
  const messages = page.messages.filter((message) => groupId !== undefined || message.group == null).reverse();
  // A fixed number of queries for the thread, whatever its length: every open tab polls it.
  const [changes, tallies, quoted] = await Promise.all([
    gateway.history.changesOf(messages),
    gateway.polls.talliesOf(messages),
    quotedMessages(gateway, account, messages),
  ]);
  return messages.map((message) =>
    toBubble(message, { changes: changes.get(message.id)!, tally: tallies.get(message.id), quoted }, groupId !== undefined),
  );
}

/** What a bubble shows besides the message itself, read for the whole thread at once. */
interface BubbleExtras {
  changes: MessageChanges;
  tally: PollTally | undefined;
  /** The messages the thread's replies quote, by id: the thread's own and the account's older ones. */
  quoted: Map<string, Message>;
}

function toBubble(message: Message, { changes, tally, quoted }: BubbleExtras, inGroup: boolean): BubbleView {
  const structured = message.structured;
  const location = structured !== null && 'location' in structured ? structured.location : undefined;
  const deleted = message.times?.revoked != null;
  const reactions = new Map<string, number>();
  for (const reaction of changes.reactions)
    if (reaction.emoji !== '') reactions.set(reaction.emoji, (reactions.get(reaction.emoji) ?? 0) + 1);
  return {
    id: message.id,
    direction: message.direction,
    sender: inGroup && message.direction === 'inbound' ? senderAddress(message) : null,
    text: deleted ? '' : message.text,
    media:
      message.mediaId === null || deleted
        ? undefined
        : {
            href: `/messages/media/${encodeURIComponent(message.mediaId)}`,
            kind: message.contentKind.replace(/_caption$/, ''),
            picture: message.contentKind === 'image' || message.contentKind === 'image_caption' || message.contentKind === 'sticker',
          },
    status: message.status,
    at: message.createdAt,
    deleted,
    earlierTexts: changes.revisions.filter((revision) => revision.kind === 'edited').map((revision) => revision.previousText),
    quoted: quotedOf(message, quoted),
    reactions: [...reactions].map(([emoji, count]) => ({ emoji, count })),
    poll:
      tally === undefined || structured === null || !('poll' in structured)
        ? undefined
        : { question: structured.poll.question, voters: tally.voters, options: tally.options },
    location:
      location === undefined
        ? undefined
        : {
            ...location,
            mapHref: `https://www.openstreetmap.org/?mlat=${location.latitude}&mlon=${location.longitude}#map=16/${location.latitude}/${location.longitude}`,
          },
    contacts: structured !== null && 'contacts' in structured ? structured.contacts : undefined,
  };
}

/** The messages the thread's replies quote: from the thread when there, the rest from the account's history in one read. */
async function quotedMessages(gateway: Services, account: ScopedAccount, messages: readonly Message[]): Promise<Map<string, Message>> {
  const thread = new Map(messages.map((message) => [message.id, message]));
  const elsewhere = [...new Set(messages.flatMap((message) => message.replyTo?.messageId ?? []))].filter((id) => !thread.has(id));
  const older = elsewhere.length === 0 ? new Map<string, Message>() : await gateway.history.findEach(account.scope, elsewhere);
  return new Map([...thread, ...older]);
}

/** The text a reply quotes, or null when the quoted message is not stored here; undefined for a message that is no reply. */
function quotedOf(message: Message, quoted: Map<string, Message>): { text: string } | null | undefined {
  if (message.replyTo == null) return undefined;
  const id = message.replyTo.messageId;
  const found = id === null ? undefined : quoted.get(id);
  return found === undefined ? null : { text: previewOf(found) };
}

/** What a bubble shows, hashed: a new message, a status, an edit, a reaction or a vote changes it. */
function threadVersion(bubbles: readonly BubbleView[]): string {
  return createHash('sha256').update(JSON.stringify(bubbles)).digest('base64url').slice(0, 22);
}
