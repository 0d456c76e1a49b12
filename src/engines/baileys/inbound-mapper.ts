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
  NO_MESSAGE_FOUND_ERROR_TEXT,
  normalizeMessageContent,
  toNumber,
} from 'baileys';
import { proto } from 'baileys';
import type { WAMessage } from 'baileys';
import { parseE164 } from '../../domain/phone.ts';
import type { E164 } from '../../domain/phone.ts';
import type { MediaKind } from '../../domain/media.ts';
import { isValidLocation, type StructuredContent } from '../../domain/structured-content.ts';
import { phonesOfVcard } from '../../domain/vcards.ts';
import { adReferral, type AdReferral } from '../../domain/referral.ts';

type InboundContentKind = 'text' | MediaKind | 'location' | 'contact' | 'poll' | 'unavailable';

/** A file an incoming message carries, as its proto describes it; the adapter downloads the bytes. */
export interface InboundMedia {
  kind: MediaKind;
  mimeType: string | null;
  fileName: string | null;
}

type InboundSkipReason =
  | 'from_me'
  | 'status_broadcast'
  /** A broadcast list or channel: not a conversation with one person. */
  | 'broadcast'
  | 'newsletter'
  | 'protocol'
  | 'reaction'
  /** A poll vote that names no poll or carries no encrypted vote. */
  | 'poll_update'
  /** Neither text, a file, a place, a contact nor a poll: stubs. */
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
      /** The file of a media message; its caption, or nothing, is `text`. */
      media: InboundMedia | null;
      /** A shared location, contact cards or a poll; or that the file is view-once. */
      structured: StructuredContent | null;
      /** A poll's message secret (base64), which its votes are encrypted with. */
      pollSecret: string | null;
      engineMessageId: string;
      /** When the sender's phone stamped it; null if the message carried no timestamp. */
      timestamp: Date | null;
      /** WhatsApp's id of the message this one quotes, when it is a reply. */
      quotedEngineId: string | null;
      /** The group's JID when it was written in a group; the sender is then the member who wrote it. */
      groupId: string | null;
      /** The JIDs (PN or LID) of the members it mentions. */
      mentionedJids: string[];
      /** The ad the person tapped before writing, from the message's externalAdReply. */
      referral: AdReferral | null;
    }
  | {
      kind: 'action';
      /** Made by our own number (on its phone, say), rather than by the chat's other side. */
      fromMe: boolean;
      /** The chat's other side. */
      fromPhone: E164 | null;
      fromLid: string | null;
      targetEngineId: string;
      action: InboundAction;
      timestamp: Date | null;
      groupId: string | null;
    }
  | {
      kind: 'poll_vote';
      fromMe: boolean;
      fromPhone: E164 | null;
      fromLid: string | null;
      /** WhatsApp's id of the poll. */
      pollEngineId: string;
      /** The vote, encrypted with the poll's secret; `openPollVote` reads it. */
      vote: proto.Message.IPollEncValue;
      /** The jids the poll's creator and the voter may be named by in the encryption, to try in turn. */
      creatorJids: string[];
      voterJids: string[];
      timestamp: Date | null;
      groupId: string | null;
    }
  | { kind: 'skip'; reason: InboundSkipReason };

/** A reaction (an empty emoji takes it away), an edit with its new text, or a revocation. */
type InboundAction = { kind: 'react'; emoji: string } | { kind: 'edit'; text: string } | { kind: 'revoke' };

/** Looks a LID jid up in Baileys' LID mapping store; answers a PN jid, or undefined if unknown. */
export type LidResolver = (lidJid: string) => string | undefined;

// Wrappers nest (a view-once inside a disappearing message), so unwrapping repeats; the bound
// stops a malformed message from looping, as Baileys' own normalizer does.
const MAX_WRAPPER_DEPTH = 5;

export function mapIncomingMessage(message: WAMessage, resolveLid: LidResolver): InboundDecision {
  const key = message.key;
  const content = unwrapMessage(message.message);
  const acted = actionOf(content);
  // Our own messages come back from our other devices; of those only what they do to a message
  // (our phone edits or deletes one the gateway sent, say) is news.
  if (key.fromMe && acted === undefined) return skip('from_me');
  const chatJid = key.remoteJid ?? '';
  const chatSkip = chatSkipReason(chatJid);
  if (chatSkip !== undefined) return skip(chatSkip);
  const { senderJid, alternativeJid, groupId } = senderKey(key);
  if (acted !== undefined) {
    // Our own change in a group names no participant: the actor is our number.
    const chat = key.fromMe && groupId !== null ? { fromPhone: null, fromLid: null } : resolveSender(senderJid, alternativeJid, resolveLid);
    if (chat === undefined) return skip('unaddressable');
    return { kind: 'action', fromMe: key.fromMe === true, ...chat, ...acted, timestamp: timestampOf(message), groupId };
  }

  const vote = content?.pollUpdateMessage;
  if (vote) return pollVoteOf(message, vote, resolveLid);
  const contentSkip = contentSkipReason(content);
  if (contentSkip !== undefined) return skip(contentSkip);
  const extracted = extractText(content);
  if (extracted === undefined) return skip('no_text');

  const sender = resolveSender(senderJid, alternativeJid, resolveLid);
  if (sender === undefined || !key.id) return skip('unaddressable');

  const viewOnce = extracted.media !== null && isViewOnce(message.message, content);
  return {
    kind: 'message',
    ...sender,
    ...extracted,
    ...(viewOnce && { structured: { viewOnce: true } }),
    pollSecret: extracted.contentKind === 'poll' ? pollSecretOf(message.message, content) : null,
    engineMessageId: key.id,
    timestamp: timestampOf(message),
    quotedEngineId: quotedIdOf(content),
    groupId,
    mentionedJids: contextOf(content)?.mentionedJid?.filter((jid): jid is string => typeof jid === 'string') ?? [],
    referral: referralOf(contextOf(content)?.externalAdReply) ?? null,
  };
}

/** A placeholder whose content never came, as a message that says so: no text, kind `unavailable`. */
export function mapUnreadableMessage(stub: WAMessage, resolveLid: LidResolver): InboundDecision {
  const key = stub.key;
  const chatSkip = chatSkipReason(key.remoteJid ?? '');
  if (chatSkip !== undefined) return skip(chatSkip);
  const { senderJid, alternativeJid, groupId } = senderKey(key);
  const sender = resolveSender(senderJid, alternativeJid, resolveLid);
  if (sender === undefined || !key.id) return skip('unaddressable');
  return {
    kind: 'message',
    ...sender,
    text: '',
    contentKind: 'unavailable',
    media: null,
    structured: null,
    pollSecret: null,
    engineMessageId: key.id,
    timestamp: timestampOf(stub),
    quotedEngineId: null,
    groupId,
    mentionedJids: [],
    referral: null,
  };
}

/**
 * A Click-to-WhatsApp ad's attribution, as the first message after the tap carries it in its
 * context (`externalAdReply`; Baileys 7's proto.ContextInfo.IExternalAdReplyInfo). The Cloud
 * API's names: title is the headline, mediaUrl the video (or, without an original, the image).
 */
export function referralOf(ad: proto.ContextInfo.IExternalAdReplyInfo | null | undefined): AdReferral | undefined {
  if (!ad) return undefined;
  const { IMAGE, VIDEO } = proto.ContextInfo.ExternalAdReplyInfo.MediaType;
  const mediaType = ad.mediaType === IMAGE ? 'image' : ad.mediaType === VIDEO ? 'video' : null;
  return adReferral({
    sourceType: ad.sourceType,
    sourceId: ad.sourceId,
    sourceUrl: ad.sourceUrl,
    headline: ad.title,
    body: ad.body,
    mediaType,
    imageUrl: mediaType === 'image' ? (ad.originalImageUrl ?? ad.mediaUrl) : null,
    videoUrl: mediaType === 'video' ? ad.mediaUrl : null,
    thumbnailUrl: ad.thumbnailUrl,
    ctwaClid: ad.ctwaClid,
  });
}

/**
 * The stub Baileys emits for a message that reached us without its content (`Message absent from
 * node`, a CIPHERTEXT stub): what the first message after tapping an ad often is. Baileys asks the
 * sender's phone to send it again (a placeholder resend) and emits the real message later, under
 * the same id. Answers the id to wait for, or undefined for any other message.
 */
export function placeholderId(message: WAMessage): string | undefined {
  if (message.key.fromMe || !message.key.id || message.message) return undefined;
  if (message.messageStubType !== proto.WebMessageInfo.StubType.CIPHERTEXT) return undefined;
  return message.messageStubParameters?.[0] === NO_MESSAGE_FOUND_ERROR_TEXT ? message.key.id : undefined;
}

/**
 * A vote on a poll. WhatsApp encrypts it with the poll's secret, bound to the jids of the poll's
 * creator and of the voter as the voter's phone wrote them: PN or LID, which the vote does not
 * say, so every form the key gives is kept to try.
 */
function pollVoteOf(message: WAMessage, update: proto.Message.IPollUpdateMessage, resolveLid: LidResolver): InboundDecision {
  const key = message.key;
  const pollKey = update.pollCreationMessageKey;
  if (!pollKey?.id || !update.vote?.encPayload || !update.vote.encIv) return skip('poll_update');
  const { senderJid, alternativeJid, groupId } = senderKey(key);
  const voter = key.fromMe ? { fromPhone: null, fromLid: null } : resolveSender(senderJid, alternativeJid, resolveLid);
  if (voter === undefined) return skip('unaddressable');
  const people = (jids: (string | null | undefined)[]) => [
    ...new Set(
      jids.filter((jid): jid is string => typeof jid === 'string' && jid !== '' && !isJidGroup(jid)).map((jid) => jidNormalizedUser(jid)),
    ),
  ];
  const chatSide = [key.remoteJid, key.remoteJidAlt, key.participant, key.participantAlt];
  return {
    kind: 'poll_vote',
    fromMe: key.fromMe === true,
    ...voter,
    pollEngineId: pollKey.id,
    vote: update.vote,
    creatorJids: people([pollKey.participant, pollKey.remoteJid, ...chatSide]),
    voterJids: people(chatSide),
    timestamp: timestampOf(message),
    groupId,
  };
}

/** A view-once file: wrapped as one (any version of the wrapper), or flagged so on the file itself. */
function isViewOnce(raw: proto.IMessage | null | undefined, content: proto.IMessage | undefined): boolean {
  const wrapped = (message: proto.IMessage | null | undefined) =>
    Boolean(message?.viewOnceMessage || message?.viewOnceMessageV2 || message?.viewOnceMessageV2Extension);
  if (wrapped(raw) || wrapped(raw?.ephemeralMessage?.message)) return true;
  return Boolean(content?.imageMessage?.viewOnce || content?.videoMessage?.viewOnce || content?.audioMessage?.viewOnce);
}

/** The secret of a poll, which sits beside the poll in the message's context info. */
function pollSecretOf(raw: proto.IMessage | null | undefined, content: proto.IMessage | undefined): string | null {
  const secret = content?.messageContextInfo?.messageSecret ?? raw?.messageContextInfo?.messageSecret;
  return secret && secret.length > 0 ? Buffer.from(secret).toString('base64') : null;
}

/**
 * Who wrote the message, as the key addresses them: the chat itself in a direct chat, the
 * participant in a group (with the other form of their address, PN or LID, when WhatsApp gave it).
 */
function senderKey(key: WAMessage['key']): { senderJid: string; alternativeJid: string | undefined; groupId: string | null } {
  const chatJid = key.remoteJid ?? '';
  if (isJidGroup(chatJid)) return { senderJid: key.participant ?? '', alternativeJid: key.participantAlt ?? undefined, groupId: chatJid };
  return { senderJid: chatJid, alternativeJid: key.remoteJidAlt ?? key.participantAlt ?? undefined, groupId: null };
}

const ProtocolType = proto.Message.ProtocolMessage.Type;

/** What a reaction or protocol message does to an earlier message; undefined for anything else. */
function actionOf(content: proto.IMessage | undefined): { targetEngineId: string; action: InboundAction } | undefined {
  const reaction = content?.reactionMessage;
  if (reaction?.key?.id) return { targetEngineId: reaction.key.id, action: { kind: 'react', emoji: reaction.text ?? '' } };
  const protocol = content?.protocolMessage;
  if (!protocol?.key?.id) return undefined;
  if (protocol.type === ProtocolType.REVOKE) return { targetEngineId: protocol.key.id, action: { kind: 'revoke' } };
  if (protocol.type === ProtocolType.MESSAGE_EDIT) {
    const edited = unwrapMessage(protocol.editedMessage);
    const text =
      edited?.conversation ??
      edited?.extendedTextMessage?.text ??
      edited?.imageMessage?.caption ??
      edited?.videoMessage?.caption ??
      edited?.documentMessage?.caption;
    if (typeof text === 'string') return { targetEngineId: protocol.key.id, action: { kind: 'edit', text } };
  }
  return undefined;
}

/** The id a reply quotes, from the message's context info. */
function quotedIdOf(content: proto.IMessage | undefined): string | null {
  return contextOf(content)?.stanzaId || null;
}

/** Each kind of message carries its context (the quote, the mentions) in its own part. */
function contextOf(content: proto.IMessage | undefined): proto.IContextInfo | undefined {
  const holders = [
    content?.extendedTextMessage,
    content?.imageMessage,
    content?.videoMessage,
    content?.audioMessage,
    content?.documentMessage,
    content?.stickerMessage,
    content?.locationMessage,
    content?.contactMessage,
    content?.contactsArrayMessage,
    content?.pollCreationMessage,
    content?.pollCreationMessageV2,
    content?.pollCreationMessageV3,
  ];
  return holders.find((holder) => holder?.contextInfo)?.contextInfo ?? undefined;
}

/**
 * The LID the adapter should look up before mapping, or undefined when none is needed. Baileys'
 * mapping store answers asynchronously, while the mapper stays pure; asking only here keeps the
 * store untouched for the usual message that carries its phone in `remoteJidAlt`.
 */
export function lidNeedingLookup(message: WAMessage): string | undefined {
  const { senderJid, alternativeJid } = senderKey(message.key);
  if (!isLid(senderJid)) return undefined;
  if (alternativeJid !== undefined && phoneOf(alternativeJid) !== undefined) return undefined;
  return jidNormalizedUser(senderJid);
}

function skip(reason: InboundSkipReason): InboundDecision {
  return { kind: 'skip', reason };
}

function chatSkipReason(chatJid: string): InboundSkipReason | undefined {
  if (isJidStatusBroadcast(chatJid)) return 'status_broadcast';
  if (isJidBroadcast(chatJid)) return 'broadcast';
  if (isJidNewsletter(chatJid)) return 'newsletter';
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
  return undefined;
}

type ExtractedContent = { text: string; contentKind: InboundContentKind; media: InboundMedia | null; structured: StructuredContent | null };

function extractText(content: proto.IMessage | undefined): ExtractedContent | undefined {
  const media = mediaOf(content);
  if (media !== undefined)
    return {
      text: media.caption ?? '',
      contentKind: media.kind,
      media: { kind: media.kind, mimeType: media.mimetype ?? null, fileName: media.fileName },
      structured: null,
    };
  const structured = structuredOf(content);
  if (structured !== undefined) return { ...structured, media: null };
  for (const text of [content?.conversation, content?.extendedTextMessage?.text]) {
    // A blank text message is no message; the gateway never stores one, in either direction.
    if (typeof text === 'string' && text.trim().length > 0)
      return { text, contentKind: 'text', media: null, structured: linkPreviewOf(content?.extendedTextMessage) };
  }
  return undefined;
}

/** The preview the sender's app attached under a link of the text, in the shape our sends use. */
function linkPreviewOf(extended: proto.Message.IExtendedTextMessage | null | undefined): StructuredContent | null {
  const url = extended?.matchedText;
  const title = extended?.title;
  if (!url || !title) return null;
  return { linkPreview: { url, title, description: extended?.description || null } };
}

/** A shared place (a live one as where it was when shared) or contact cards. */
function structuredOf(
  content: proto.IMessage | undefined,
): { text: string; contentKind: InboundContentKind; structured: StructuredContent } | undefined {
  const place = content?.locationMessage ?? content?.liveLocationMessage;
  if (place) {
    const fixed = content?.locationMessage ?? undefined;
    const location = {
      latitude: Number(place.degreesLatitude ?? Number.NaN),
      longitude: Number(place.degreesLongitude ?? Number.NaN),
      name: fixed?.name ?? null,
      address: fixed?.address ?? null,
      url: fixed?.url ?? null,
    };
    if (!isValidLocation(location)) return undefined;
    const text = fixed?.comment ?? content?.liveLocationMessage?.caption ?? '';
    return { text, contentKind: 'location', structured: { location } };
  }
  const poll = content?.pollCreationMessage ?? content?.pollCreationMessageV2 ?? content?.pollCreationMessageV3;
  if (poll) {
    const options = (poll.options ?? []).map((option) => option.optionName ?? '');
    // WhatsApp writes 0 for "as many as there are options".
    const chosen = poll.selectableOptionsCount ?? 0;
    const selectableCount = chosen > 0 && chosen <= options.length ? chosen : options.length;
    return { text: '', contentKind: 'poll', structured: { poll: { question: poll.name ?? '', options, selectableCount } } };
  }
  const cards = content?.contactsArrayMessage?.contacts ?? (content?.contactMessage ? [content.contactMessage] : undefined);
  if (cards && cards.length > 0) {
    const contacts = cards.map((card) => ({
      name: card.displayName ?? '',
      phones: phonesOfVcard(card.vcard ?? ''),
      vcard: card.vcard ?? null,
    }));
    return { text: '', contentKind: 'contact', structured: { contacts } };
  }
  return undefined;
}

/** The one file a message carries, by kind; a voice note is the audio message marked PTT. */
function mediaOf(
  content: proto.IMessage | undefined,
): { kind: MediaKind; caption?: string | null; mimetype?: string | null; fileName: string | null } | undefined {
  if (content?.imageMessage) return { kind: 'image', ...content.imageMessage, fileName: null };
  if (content?.videoMessage) return { kind: 'video', ...content.videoMessage, fileName: null };
  if (content?.audioMessage)
    return { kind: content.audioMessage.ptt ? 'voice' : 'audio', mimetype: content.audioMessage.mimetype, fileName: null };
  if (content?.documentMessage) return { kind: 'document', ...content.documentMessage, fileName: content.documentMessage.fileName ?? null };
  if (content?.stickerMessage) return { kind: 'sticker', mimetype: content.stickerMessage.mimetype, fileName: null };
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
