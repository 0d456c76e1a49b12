/**
 * Turns one Baileys message from `messages.upsert` (type `notify`; the caller filters the type)
 * into what the gateway keeps: a text from a person, or a reason to skip it. Pure, so every case
 * is a unit test built from Baileys' own `proto` types.
 */
import {
  isHostedLidUser,
  isHostedPnUser,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  isLidUser,
  isPnUser,
  jidDecode,
  jidNormalizedUser,
  normalizeMessageContent,
  toNumber,
} from 'baileys';
import type { proto, WAMessage } from 'baileys';
import { parseE164 } from '../../domain/phone.ts';
import type { E164 } from '../../domain/phone.ts';

export type InboundContentKind = 'text' | 'image_caption' | 'video_caption' | 'document_caption';

export type InboundSkipReason =
  | 'from_me'
  | 'status_broadcast'
  /** A broadcast list or channel: not a conversation with one person. */
  | 'broadcast'
  | 'newsletter'
  | 'group'
  | 'protocol'
  | 'reaction'
  | 'poll_update'
  /** No text and no caption: stickers, audio, locations, contacts, polls, stubs. */
  | 'no_text'
  /** The key has no id or no sender we can address (a bot, an unknown server). */
  | 'unaddressable';

export type InboundDecision =
  | {
      kind: 'message';
      /** Null only when WhatsApp addressed the sender by LID and no mapping to a phone is known. */
      fromPhone: E164 | null;
      /** The sender's LID as a normalized jid (`digits@lid`), whenever WhatsApp told us one. */
      fromLid: string | null;
      text: string;
      contentKind: InboundContentKind;
      engineMessageId: string;
      /** When the sender's phone stamped it; null if the message carried no timestamp. */
      timestamp: Date | null;
    }
  | { kind: 'skip'; reason: InboundSkipReason };

/** Looks a LID jid up in Baileys' LID mapping store; answers a PN jid, or undefined if unknown. */
export type LidResolver = (lidJid: string) => string | undefined;

// Wrappers nest (a view-once inside a disappearing message), so unwrapping repeats; the bound
// stops a malformed message from looping, as Baileys' own normalizer does.
const MAX_WRAPPER_DEPTH = 5;

export function mapIncomingMessage(message: WAMessage, resolveLid: LidResolver): InboundDecision {
  const key = message.key;
  if (key.fromMe) return skip('from_me');
  const chatJid = key.remoteJid ?? '';
  const chatSkip = chatSkipReason(chatJid);
  if (chatSkip !== undefined) return skip(chatSkip);

  const content = unwrapMessage(message.message);
  const contentSkip = contentSkipReason(content);
  if (contentSkip !== undefined) return skip(contentSkip);
  const extracted = extractText(content);
  if (extracted === undefined) return skip('no_text');

  const sender = resolveSender(chatJid, key.remoteJidAlt ?? key.participantAlt ?? undefined, resolveLid);
  if (sender === undefined || !key.id) return skip('unaddressable');

  return {
    kind: 'message',
    ...sender,
    ...extracted,
    engineMessageId: key.id,
    timestamp: timestampOf(message),
  };
}

/**
 * The LID the adapter should look up before mapping, or undefined when none is needed. Baileys'
 * mapping store answers asynchronously, while the mapper stays pure; asking only here keeps the
 * store untouched for the usual message that carries its phone in `remoteJidAlt`.
 */
export function lidNeedingLookup(message: WAMessage): string | undefined {
  const key = message.key;
  const chatJid = key.remoteJid ?? '';
  if (!isLid(chatJid)) return undefined;
  const alternative = key.remoteJidAlt ?? key.participantAlt ?? undefined;
  if (alternative !== undefined && phoneOf(alternative) !== undefined) return undefined;
  return jidNormalizedUser(chatJid);
}

function skip(reason: InboundSkipReason): InboundDecision {
  return { kind: 'skip', reason };
}

function chatSkipReason(chatJid: string): InboundSkipReason | undefined {
  if (isJidStatusBroadcast(chatJid)) return 'status_broadcast';
  if (isJidBroadcast(chatJid)) return 'broadcast';
  if (isJidNewsletter(chatJid)) return 'newsletter';
  if (isJidGroup(chatJid)) return 'group';
  return undefined;
}

function unwrapMessage(content: proto.IMessage | null | undefined): proto.IMessage | undefined {
  let current = content ?? undefined;
  for (let depth = 0; depth < MAX_WRAPPER_DEPTH && current !== undefined; depth++) {
    // Baileys' normalizer knows the future-proof wrappers (ephemeral, view-once, document with
    // caption, edited) but not the copy a linked device sends of our own messages.
    const normalized = normalizeMessageContent(current);
    const inner = normalized?.deviceSentMessage?.message ?? undefined;
    if (inner === undefined) return normalized;
    current = inner;
  }
  return current;
}

function contentSkipReason(content: proto.IMessage | undefined): InboundSkipReason | undefined {
  if (content === undefined) return 'no_text';
  if (content.protocolMessage) return 'protocol';
  if (content.reactionMessage || content.encReactionMessage) return 'reaction';
  if (content.pollUpdateMessage) return 'poll_update';
  return undefined;
}

function extractText(content: proto.IMessage | undefined): { text: string; contentKind: InboundContentKind } | undefined {
  const candidates: [string | null | undefined, InboundContentKind][] = [
    [content?.conversation, 'text'],
    [content?.extendedTextMessage?.text, 'text'],
    [content?.imageMessage?.caption, 'image_caption'],
    [content?.videoMessage?.caption, 'video_caption'],
    [content?.documentMessage?.caption, 'document_caption'],
  ];
  for (const [text, contentKind] of candidates) {
    // A blank text is what a media message without a caption carries; the gateway never stores
    // an empty message, in either direction.
    if (typeof text === 'string' && text.trim().length > 0) return { text, contentKind };
  }
  return undefined;
}

function resolveSender(
  chatJid: string,
  alternativeJid: string | undefined,
  resolveLid: LidResolver,
): { fromPhone: E164 | null; fromLid: string | null } | undefined {
  if (isLid(chatJid)) {
    const fromLid = jidNormalizedUser(chatJid);
    const fromPhone = phoneOf(alternativeJid) ?? phoneOf(resolveLid(fromLid)) ?? null;
    return { fromPhone, fromLid };
  }
  if (isPhone(chatJid)) {
    const fromPhone = phoneOf(chatJid);
    // A PN jid whose digits are no phone number cannot be answered or attributed; the port
    // needs either a phone or a LID.
    if (fromPhone === undefined) return undefined;
    const fromLid = alternativeJid !== undefined && isLid(alternativeJid) ? jidNormalizedUser(alternativeJid) : null;
    return { fromPhone, fromLid };
  }
  return undefined;
}

function isLid(jid: string): boolean {
  return Boolean(isLidUser(jid) || isHostedLidUser(jid));
}

function isPhone(jid: string): boolean {
  return Boolean(isPnUser(jid) || isHostedPnUser(jid));
}

/** The E.164 of a phone-number jid; undefined for a LID, another server or bad digits. */
function phoneOf(jid: string | undefined): E164 | undefined {
  if (jid === undefined || !isPhone(jid)) return undefined;
  const user = jidDecode(jid)?.user;
  if (user === undefined || !/^[0-9]+$/.test(user)) return undefined;
  return parseE164(`+${user}`);
}

function timestampOf(message: WAMessage): Date | null {
  const seconds = toNumber(message.messageTimestamp);
  return seconds > 0 ? new Date(seconds * 1000) : null;
}
