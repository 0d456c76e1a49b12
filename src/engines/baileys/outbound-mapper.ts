/**
 * From the gateway's outgoing side to Baileys and back: the recipient's jid, the content of a
 * text, and the receipts WhatsApp reports for what we sent. Pure, so every status is a unit test.
 */
import { jidEncode, proto } from 'baileys';
import type { AnyMessageContent, ChatModification, WAMediaUpload, WAMessage, WAMessageKey, WAMessageUpdate, WAUrlInfo } from 'baileys';
import type { ChatChange, ChatTarget, MessageAction, MessageRef } from '../engine.ts';
import type { LinkPreview, SharedContact, SharedLocation, SharedPoll } from '../../domain/structured-content.ts';
import type { MediaKind } from '../../domain/media.ts';
import type { E164 } from '../../domain/phone.ts';

type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed';

export interface ReceiptUpdate {
  engineMessageId: string;
  status: ReceiptStatus;
  /** WhatsApp's error code for a failed message, e.g. "463" when the account is restricted. */
  errorCode?: string;
}

const Status = proto.WebMessageInfo.Status;

// PENDING is our own socket's bookkeeping, not news from WhatsApp, so it maps to nothing.
// PLAYED is the read receipt of voice and video notes.
const receiptStatuses: ReadonlyMap<proto.WebMessageInfo.Status, ReceiptStatus> = new Map<proto.WebMessageInfo.Status, ReceiptStatus>([
  [Status.SERVER_ACK, 'sent'],
  [Status.DELIVERY_ACK, 'delivered'],
  [Status.READ, 'read'],
  [Status.PLAYED, 'read'],
  [Status.ERROR, 'failed'],
]);

export function toRecipientJid(phone: E164): string {
  return jidEncode(phone.slice(1), 's.whatsapp.net');
}

/**
 * A text, with its link preview when it has one. The preview is ours (fetched by the gateway or
 * given by the caller), so Baileys is never left to fetch one itself: its own fetch would bypass
 * the gateway's address guard.
 */
export function toTextContent(text: string, preview?: LinkPreview, thumbnail?: Buffer): AnyMessageContent {
  if (preview === undefined) return { text };
  const linkPreview: WAUrlInfo = {
    'canonical-url': preview.url,
    'matched-text': preview.url,
    title: preview.title,
    ...(preview.description !== null && { description: preview.description }),
    ...(thumbnail !== undefined && { jpegThumbnail: thumbnail }),
  };
  return { text, linkPreview };
}

/** A place, contact cards or a poll as Baileys builds each; `text` is a place's comment. */
export function toStructuredContent(
  content: { location: SharedLocation } | { contacts: SharedContact[] } | { poll: SharedPoll },
  text: string,
  pollSecret: Uint8Array,
): AnyMessageContent {
  if ('location' in content) {
    const { latitude, longitude, name, address } = content.location;
    return {
      location: {
        degreesLatitude: latitude,
        degreesLongitude: longitude,
        ...(name !== null && { name }),
        ...(address !== null && { address }),
        ...(text !== '' && { comment: text }),
      },
    };
  }
  if ('contacts' in content) {
    const cards = content.contacts.map((card) => ({ displayName: card.name, vcard: card.vcard ?? '' }));
    return { contacts: { displayName: cards.length === 1 ? cards[0]!.displayName : `${cards.length} contacts`, contacts: cards } };
  }
  const { question, options, selectableCount } = content.poll;
  return { poll: { name: question, values: [...options], selectableCount, messageSecret: pollSecret } };
}

/** A message of a chat as WhatsApp names it: the chat, whose side sent it, and its id (and in a group, which member sent it). */
export function toMessageKey(ref: MessageRef): WAMessageKey {
  if (ref.groupId === undefined) return { remoteJid: toRecipientJid(ref.chatPhone), fromMe: ref.fromMe, id: ref.engineMessageId };
  const participant =
    ref.participant === undefined ? undefined : ref.participant.startsWith('+') ? toRecipientJid(ref.participant as E164) : ref.participant;
  return { remoteJid: ref.groupId, fromMe: ref.fromMe, id: ref.engineMessageId, ...(participant !== undefined && { participant }) };
}

/** A chat's JID: a phone's, or a LID or group id as it is. */
export function toChatJid(chatId: string): string {
  return chatId.startsWith('+') ? toRecipientJid(chatId as E164) : chatId;
}

/**
 * A chat's change as Baileys' `chatModify` takes it. Archiving and read marks name the range of
 * messages they cover, which ends with the chat's last message; pins and mutes name none. A
 * mute's end is a timestamp in milliseconds.
 */
export function toChatModification(chat: ChatTarget, change: ChatChange): ChatModification {
  const last = chat.lastMessage;
  const participant = last.participant === undefined ? {} : { participant: toChatJid(last.participant) };
  const key = { remoteJid: toChatJid(chat.chatId), fromMe: last.fromMe, id: last.engineMessageId, ...participant };
  const lastMessages = [{ key, messageTimestamp: Math.floor(last.at.getTime() / 1000) }];
  switch (change.kind) {
    case 'archive':
      return { archive: change.archived, lastMessages };
    case 'pin':
      return { pin: change.pinned };
    case 'mute':
      return { mute: change.until === null ? null : change.until.getTime() };
    case 'mark_unread':
      return { markRead: !change.unread, lastMessages };
  }
}

/** What a reply quotes: WhatsApp shows the quoted text above the answer. */
export function toQuoted(ref: MessageRef): WAMessage {
  return { key: toMessageKey(ref), message: { conversation: ref.text } };
}

/** A reaction (an empty text takes ours away), an edit of the text, or a delete for everyone. */
export function toActionContent(target: MessageRef, action: MessageAction): AnyMessageContent {
  const key = toMessageKey(target);
  switch (action.kind) {
    case 'react':
      return { react: { text: action.emoji, key } };
    case 'edit':
      return { text: action.text, edit: key };
    case 'revoke':
      return { delete: key };
  }
}

/**
 * What Baileys needs of a file to send. The bytes go as a stream, which Baileys encrypts to a
 * temporary file as it reads, so a 100 MiB document is never held whole in memory.
 */
export interface MediaToSend {
  kind: MediaKind;
  mimeType: string;
  fileName: string | null;
  bytes: WAMediaUpload;
}

/**
 * A file as Baileys sends each kind: a voice note as PTT in Ogg Opus (WhatsApp plays only that
 * as a voice note), a document with its name, a sticker without a caption (WhatsApp shows none).
 */
export function toMediaContent(media: MediaToSend, caption: string, viewOnce = false): AnyMessageContent {
  const content = mediaContent(media, caption);
  // Baileys wraps it in a viewOnceMessage, which only images, videos and voice notes may be.
  return viewOnce ? ({ ...content, viewOnce: true } as AnyMessageContent) : content;
}

function mediaContent(media: MediaToSend, caption: string): AnyMessageContent {
  const withCaption = caption === '' ? {} : { caption };
  switch (media.kind) {
    case 'image':
      return { image: media.bytes, mimetype: media.mimeType, ...withCaption };
    case 'video':
      return { video: media.bytes, mimetype: media.mimeType, ...withCaption };
    case 'voice':
      return { audio: media.bytes, mimetype: 'audio/ogg; codecs=opus', ptt: true };
    case 'audio':
      return { audio: media.bytes, mimetype: media.mimeType };
    case 'sticker':
      return { sticker: media.bytes, mimetype: media.mimeType };
    case 'document':
      return { document: media.bytes, mimetype: media.mimeType, fileName: media.fileName ?? 'file', ...withCaption };
  }
}

/** One `messages.update` entry as a receipt for a message we sent, or undefined if it is none. */
export function mapReceiptUpdate(update: WAMessageUpdate): ReceiptUpdate | undefined {
  // Updates about messages we received (read on another of our devices, edits, deletions) say
  // nothing about delivery of ours.
  if (!update.key.fromMe || !update.key.id) return undefined;
  const statusCode = update.update.status;
  if (statusCode === undefined || statusCode === null) return undefined;
  const status = receiptStatuses.get(statusCode);
  if (status === undefined) return undefined;
  const receipt: ReceiptUpdate = { engineMessageId: update.key.id, status };
  if (status === 'failed') {
    const errorCode = errorCodeOf(update.update.messageStubParameters);
    if (errorCode !== undefined) receipt.errorCode = errorCode;
  }
  return receipt;
}

// Baileys puts the ack's error attribute first in `messageStubParameters` (then, for 463, a
// human sentence); the field is typed `any` on WAMessage, so it is checked here.
function errorCodeOf(parameters: unknown): string | undefined {
  if (!Array.isArray(parameters)) return undefined;
  const first: unknown = parameters[0];
  if (typeof first === 'string' && first.length > 0) return first;
  if (typeof first === 'number') return String(first);
  return undefined;
}
