import { presentReferral } from './referral.ts';
import { presentPoll, presentStructured, type PollTally, type SharedPoll } from './structured-content.ts';
import type { GroupChange } from './groups.ts';
import type { CallStatus } from './calls.ts';
import type { NumberPause, ResumeReason } from './number-pauses.ts';
import type { NewChatQuotaState } from './new-chat-quota.ts';
import type { ContactPresence } from './presence.ts';
import type { MediaKind, MediaObject } from './media.ts';
import { senderAddress, type Message, type MessageGroup, type QuotedMessage, type SessionStatus } from './model.ts';
import type { EventPayload } from './webhooks.ts';

// The payloads of the events the gateway delivers (webhooks, sinks, streams, Chatwoot), one
// builder per event: what each destination receives is built here once, from the domain's objects.

/**
 * An incoming file: stored, or known only by its kind, why it could not be had, and whether
 * the gateway is still trying (a `message.media` event follows either way).
 */
export type ReceivedMedia = { stored: MediaObject } | { kind: MediaKind; unavailable: string; willRetry: boolean };

/** Where a file is downloaded: with a key of the account, and by a signed link that needs none. */
export interface MediaAddresses {
  plain(mediaId: string): string;
  signed?: { url: string; expiresAt: Date };
}

/**
 * A message's file as webhooks and the API describe it. `url` is where a key of the account
 * downloads it: absolute under WAGW_PUBLIC_URL when that is set, a path otherwise. Webhooks add
 * a signed link that needs no key, for handing on.
 */
export function mediaPayload(media: ReceivedMedia, addresses?: MediaAddresses) {
  if (!('stored' in media)) return { status: 'unavailable', kind: media.kind, reason: media.unavailable, will_retry: media.willRetry };
  const { stored } = media;
  return {
    status: 'available',
    id: stored.id,
    kind: stored.kind,
    mime_type: stored.mimeType,
    size: stored.size,
    sha256: stored.sha256,
    filename: stored.fileName,
    url: addresses === undefined ? `/media/${stored.id}` : addresses.plain(stored.id),
    ...(addresses?.signed !== undefined && {
      signed_url: addresses.signed.url,
      signed_url_expires_at: addresses.signed.expiresAt.toISOString(),
    }),
  };
}

/**
 * The incoming-message payload. It satisfies receivers written for either published shape: the
 * flat fields, and the nested `data` object with `from`, `message` and `timestamp`. The nested
 * `from` is never null, so it falls back to the LID when the sender's phone is unknown.
 */
export function incomingMessagePayload(message: Message, media?: ReceivedMedia, addresses?: MediaAddresses): EventPayload {
  const createdAt = message.createdAt.toISOString();
  const described = media === undefined ? undefined : mediaPayload(media, addresses);
  return {
    event: 'message',
    message_id: message.id,
    created_at: createdAt,
    from_phone: message.fromPhone,
    from_lid: message.fromLid,
    ...presentChat(message),
    ...presentMentions(message),
    message: message.text,
    content_kind: message.contentKind,
    ...(described !== undefined && { media: described }),
    ...presentStructured(message.structured),
    ...(message.referral != null && { referral: presentReferral(message.referral) }),
    reply_to: presentReplyTo(message.replyTo),
    status: 'received',
    data: {
      from: senderAddress(message),
      message: message.text,
      timestamp: createdAt,
      ...(described !== undefined && { media: described }),
      ...presentStructured(message.structured),
    },
  };
}

/**
 * A message's chat, as webhooks and the API show it: `to_phone` (null for a message we sent to
 * a group, whose recipient is the group) and `group` (null for a direct chat).
 */
export function presentChat(message: Pick<Message, 'direction' | 'toPhone' | 'group'>) {
  const group = message.group ?? null;
  return {
    to_phone: group !== null && message.direction === 'outbound' ? null : message.toPhone,
    group: group === null ? null : { id: group.id, subject: group.subject },
  };
}

/** A group message's mentions, as webhooks and the API show them; a direct message has none to show. */
export function presentMentions(message: Pick<Message, 'group' | 'mentions'>) {
  return message.group == null ? {} : { mentions: [...(message.mentions ?? [])] };
}

/** What a message answers, as webhooks and the API show it; null for a message that is no reply. */
export function presentReplyTo(replyTo: QuotedMessage | null | undefined) {
  return replyTo === undefined || replyTo === null ? null : { message_id: replyTo.messageId, whatsapp_id: replyTo.engineMessageId };
}

/**
 * The later news of an incoming file whose first download failed: stored at last, or given up
 * on. It names the message the `message` event reported.
 */
export function messageMediaPayload(message: Message, media: ReceivedMedia, addresses?: MediaAddresses): EventPayload {
  return {
    event: 'message.media',
    message_id: message.id,
    created_at: message.createdAt.toISOString(),
    from_phone: message.fromPhone,
    from_lid: message.fromLid,
    ...presentChat(message),
    media: mediaPayload(media, addresses),
  };
}

export function messageStatusPayload(
  message: Pick<Message, 'id' | 'fromPhone' | 'toPhone' | 'direction' | 'group'>,
  status: 'sent' | 'delivered' | 'read' | 'failed' | 'unknown' | 'cancelled' | 'expired',
  errorCode: string | null,
  at: Date,
): EventPayload {
  return {
    event: 'message.status',
    message_id: message.id,
    from_phone: message.fromPhone,
    ...presentChat(message),
    status,
    error_code: errorCode,
    timestamp: at.toISOString(),
  };
}

/**
 * What happened to a message in a chat of one of our numbers: a reaction, an edit or a
 * revocation, by the other side or (`from_me`) by our number on another of its devices.
 * `message_id` is ours when the message is stored here; `whatsapp_id` is WhatsApp's always.
 */
export interface MessageChange {
  messageId: string | null;
  whatsappId: string;
  /** Our number. */
  phone: string;
  /** The group chat of the message, or null for a direct one. */
  group: MessageGroup | null;
  /** Who acted: a phone, or a LID when the phone is unknown. */
  byPhone: string | null;
  byLid: string | null;
  fromMe: boolean;
  at: Date;
}

function changePayload(event: 'message.reaction' | 'message.edited' | 'message.revoked', change: MessageChange) {
  return {
    event,
    message_id: change.messageId,
    whatsapp_id: change.whatsappId,
    phone: change.phone,
    group: change.group === null ? null : { id: change.group.id, subject: change.group.subject },
    by_phone: change.byPhone,
    by_lid: change.byLid,
    from_me: change.fromMe,
    timestamp: change.at.toISOString(),
  };
}

/** A reaction set, or (`emoji` empty, `removed` true) taken away. */
export function messageReactionPayload(change: MessageChange, emoji: string): EventPayload {
  return { ...changePayload('message.reaction', change), emoji, removed: emoji === '' };
}

/** An edit, with the text the message had before when it is stored here. */
export function messageEditedPayload(change: MessageChange, text: string, previousText: string | null): EventPayload {
  return { ...changePayload('message.edited', change), message: text, previous_message: previousText };
}

/** A message deleted for everyone; its text is kept in the message's history, not repeated here. */
export function messageRevokedPayload(change: MessageChange): EventPayload {
  return changePayload('message.revoked', change);
}

/**
 * A change in a group of one of our numbers (`phone`). `number_affected` says that our number
 * itself was added, removed, promoted or demoted, or left.
 */
export function groupUpdatedPayload(phone: string, group: MessageGroup, change: GroupChange, numberAffected: boolean): EventPayload {
  return {
    event: 'group.updated',
    phone,
    group: { id: group.id, subject: group.subject },
    change: change.kind,
    participants: change.participants.map((member) => ({ phone: member.phone, lid: member.lid })),
    ...(change.kind === 'subject' && { subject: change.subject ?? null }),
    ...(change.kind === 'description' && { description: change.description ?? null }),
    number_affected: numberAffected,
    by_phone: change.actor?.phone ?? null,
    by_lid: change.actor?.lid ?? null,
    timestamp: change.at.toISOString(),
  };
}

/**
 * A person of one of our numbers (`phone`), known so far by LID, now has a phone too (or a
 * different one). Messages stored from the LID carry the phone from now on.
 */
export function contactIdentityPayload(phone: string, identity: { lid: string; phone: string }, source: string, at: Date): EventPayload {
  return {
    event: 'contact.identity',
    phone,
    contact_phone: identity.phone,
    contact_lid: identity.lid,
    source,
    timestamp: at.toISOString(),
  };
}

/** A call to our number (`phone`), as the `call` event reports it. */
export interface CallReport {
  callId: string;
  phone: string;
  fromPhone: string | null;
  fromLid: string | null;
  groupId: string | null;
  video: boolean;
  status: CallStatus;
  /** The gateway rejected it, as the number's reject_calls setting asks. */
  byGateway: boolean;
  at: Date;
}

export function callPayload(call: CallReport): EventPayload {
  return {
    event: 'call',
    call_id: call.callId,
    phone: call.phone,
    from_phone: call.fromPhone,
    from_lid: call.fromLid,
    group: call.groupId === null ? null : { id: call.groupId },
    video: call.video,
    status: call.status,
    rejected_by_gateway: call.byGateway,
    timestamp: call.at.toISOString(),
  };
}

/** What a contact showed our number (`phone`), which subscribed to it. */
export interface PresenceReport {
  phone: string;
  contactPhone: string | null;
  contactLid: string | null;
  /** The group chat the contact is typing in, when it is one. */
  groupId: string | null;
  presence: ContactPresence;
  lastSeen: Date | null;
  at: Date;
}

export function presenceUpdatePayload(report: PresenceReport): EventPayload {
  return {
    event: 'presence.update',
    phone: report.phone,
    contact_phone: report.contactPhone,
    contact_lid: report.contactLid,
    group: report.groupId === null ? null : { id: report.groupId },
    presence: report.presence,
    last_seen: report.lastSeen?.toISOString() ?? null,
    timestamp: report.at.toISOString(),
  };
}

/** A vote on a poll: who voted, what they chose now (empty: they took their vote back) and the totals since. */
export interface PollVote {
  messageId: string;
  whatsappId: string;
  /** Our number. */
  phone: string;
  group: MessageGroup | null;
  voterPhone: string | null;
  voterLid: string | null;
  options: readonly string[];
  at: Date;
}

export function pollVotePayload(vote: PollVote, poll: SharedPoll, tally: PollTally): EventPayload {
  return {
    event: 'poll.vote',
    message_id: vote.messageId,
    whatsapp_id: vote.whatsappId,
    phone: vote.phone,
    group: vote.group === null ? null : { id: vote.group.id, subject: vote.group.subject },
    voter_phone: vote.voterPhone,
    voter_lid: vote.voterLid,
    options: [...vote.options],
    poll: presentPoll(poll, tally),
    timestamp: vote.at.toISOString(),
  };
}

export function sessionStatusPayload(phone: string, status: SessionStatus, reason: string | null, at: Date): EventPayload {
  return { event: 'session.status', phone, status, reason, timestamp: at.toISOString() };
}

/** A number began to hold its sends, and why; `until` is when it lifts by itself, null when unknown. */
export function numberPausedPayload(phone: string, pause: NumberPause): EventPayload {
  return {
    event: 'number.paused',
    number: phone,
    reason: pause.reason,
    since: pause.since.toISOString(),
    until: pause.until?.toISOString() ?? null,
    detail: pause.detail,
  };
}

export function numberResumedPayload(phone: string, reason: ResumeReason, at: Date): EventPayload {
  return { event: 'number.resumed', number: phone, reason, at: at.toISOString() };
}

/**
 * WhatsApp capped the number's new chats (a send refused with 475, or its quota said so): first
 * contacts wait until `until`, while replies to people who wrote to the number still go.
 */
export function numberCappedPayload(phone: string, state: NewChatQuotaState, detail: string, at: Date): EventPayload {
  return {
    event: 'number.capped',
    number: phone,
    since: at.toISOString(),
    until: state.cappedUntil?.toISOString() ?? null,
    total: state.total,
    used: state.used,
    cycle_ends_at: state.cycleEndsAt?.toISOString() ?? null,
    detail,
  };
}

export function testEventPayload(at: Date): EventPayload {
  return { event: 'test', message: 'This is a test event from wa-gateway.', timestamp: at.toISOString() };
}
