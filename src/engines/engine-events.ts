import type { Message, MessageContentKind, SessionLease, SessionStatus } from '../domain/model.ts';
import type { AdReferral } from '../domain/referral.ts';
import type { StructuredContent } from '../domain/structured-content.ts';
import type { GroupChange } from '../domain/groups.ts';
import type { E164 } from '../domain/phone.ts';
import type { PauseReason } from '../domain/number-pauses.ts';
import type { IdentitySource } from '../domain/identities.ts';
import type { CallStatus } from '../domain/calls.ts';
import type { ContactPresence } from '../domain/presence.ts';
import type { CallRef, IncomingMedia, MessageAction } from './engine.ts';
import type { NewChatQuota } from '../domain/new-chat-quota.ts';

// What an engine reports to the gateway as it happens (EngineEvents): messages, actions, receipts,
// statuses, restrictions, calls, presence and the identities it learns. The calls the gateway
// makes to an engine are its port, in engine.ts.

export interface IncomingMessageEvent {
  /** Our number, the one the message was sent to. */
  toPhone: E164;
  /**
   * The sender's phone. WhatsApp may address a sender by LID only; the engine resolves the
   * phone where it can, and passes null when it cannot, rather than guessing.
   */
  fromPhone: E164 | null;
  /** The sender's LID as `<digits>@lid`, without a device suffix, whenever WhatsApp told it. */
  fromLid: string | null;
  /** The name the sender gave themselves on WhatsApp, when the message carried it. */
  senderName?: string;
  /** What told the engine that fromLid is fromPhone's, when both are given: a message by default. */
  identitySource?: IdentitySource;
  /** The text is the message's own, or the caption of a media message of this kind. */
  text: string;
  contentKind: MessageContentKind;
  /** The file of a media message, when the engine can fetch it. */
  media?: IncomingMedia;
  /** A shared location, contact cards or a poll; or that a file is view-once, or a text's link preview. */
  structured?: StructuredContent;
  /** For a poll: the secret its votes are encrypted with (base64), where the network encrypts them. */
  pollSecret?: string;
  engineMessageId: string;
  receivedAt: Date;
  /** WhatsApp's id of the message this one quotes, when it is a reply. */
  quotedEngineId?: string;
  /** The group it was sent to, when it is a group message; the sender is then a member. */
  group?: { id: string; subject: string | null };
  /** The members a group message mentions: phones, or LIDs (`…@lid`) where the phone is unknown. */
  mentions?: string[];
  /** The ad or post the person tapped before writing (Click-to-WhatsApp). */
  referral?: AdReferral;
}

/** A reaction, edit or revocation that arrived in a chat of one of our numbers. */
export interface IncomingActionEvent {
  /** Our number. */
  toPhone: E164;
  /** Who acted: the other side, or (with `fromMe`) our own number on another of its devices. */
  actorPhone: E164 | null;
  actorLid: string | null;
  fromMe: boolean;
  /** WhatsApp's id of the message acted on. */
  targetEngineId: string;
  /** The group chat it happened in, if it is one. */
  groupId?: string;
  action: MessageAction;
  at: Date;
}

/** A call to one of our numbers, or news of one, as the engine heard it. */
export interface IncomingCallEvent {
  /** Our number. */
  toPhone: E164;
  call: CallRef;
  /** The caller's phone, and its LID when WhatsApp named the caller by one. */
  fromPhone: E164 | null;
  fromLid: string | null;
  /** The group the call was made in, if it is a group call. */
  groupId: string | null;
  video: boolean;
  status: CallStatus;
  at: Date;
}

/** What a contact a number subscribed to shows of itself, as the engine heard it. */
export interface PresenceEvent {
  /** Our number. */
  toPhone: E164;
  contactPhone: E164 | null;
  contactLid: string | null;
  /** The group chat the contact is typing or recording in, if it is one. */
  groupId: string | null;
  presence: ContactPresence;
  lastSeen: Date | null;
  at: Date;
}

/**
 * A vote on a poll in a chat of one of our numbers: the voter's whole current selection, which
 * replaces their earlier one. The engine may carry it encrypted, as WhatsApp does; the poll's
 * secret and options, which only the stored poll knows, then open it.
 */
export interface IncomingPollVoteEvent {
  /** Our number. */
  toPhone: E164;
  voterPhone: E164 | null;
  voterLid: string | null;
  /** WhatsApp's id of the poll voted on. */
  pollEngineId: string;
  /** The group chat of the poll, if it is a group's. */
  groupId?: string;
  at: Date;
  /**
   * The options chosen, given the poll: its secret (null where the engine needs none) and its
   * options. Undefined when the vote cannot be read with them.
   */
  selectedOptions(poll: { secret: string | null; options: readonly string[] }): string[] | undefined;
}

export interface SessionStatusEvent {
  /** The lease of the session that saw the change; the write is refused if it is stale. */
  lease: SessionLease;
  phone: E164;
  status: SessionStatus;
  reason: string | null;
  /** Set when the engine restarted a session that looked open but had gone quiet (no traffic, no answered probe). */
  quietRestart?: true;
}

export interface ReceiptEvent {
  /** The lease of the session that got the receipt; the write is refused if it is stale. */
  lease: SessionLease;
  /**
   * Our number that sent the message. A WhatsApp message id is unique only per sender, and two of
   * our numbers (a sandbox one and a real one, say) may hold the same id, so a receipt is
   * matched by both.
   */
  phone: E164;
  engineMessageId: string;
  status: 'delivered' | 'read' | 'failed';
  /** WhatsApp's reason for a failed receipt, such as '463'; null when it gave none. */
  errorCode: string | null;
  at: Date;
}

/**
 * WhatsApp stopped the number from sending for a while, or for good: a 463 (restricted), a
 * reach-out time lock, rate-overlimit (429), or a log-out. The engine reports it before it
 * refuses the send that met it, so the number is paused by the time that send is answered.
 */
export interface NumberRestrictedEvent {
  /** The lease of the session that heard it; the pause is written under it. */
  lease: SessionLease;
  phone: E164;
  reason: Exclude<PauseReason, 'manual'>;
  /** When WhatsApp lifts it (or, for a rate limit, when the engine's backoff ends); null when unknown. */
  until: Date | null;
  /** WhatsApp's own words or codes, such as the time lock's enforcement type. */
  detail: string | null;
}

/** WhatsApp said a restriction of the number is over (a reach-out time lock lifted early). */
export interface RestrictionLiftedEvent {
  lease: SessionLease;
  phone: E164;
}

/**
 * News of the number's cap on new chats (ADR 0058): WhatsApp's quota as the session read it or
 * WhatsApp pushed it (a failed query is a quota of status `unknown`, with its error), or a send
 * WhatsApp refused with 475, the cap met. The engine reports a 475 before it fails the send that
 * met it, so first contacts are held by the time that send is answered.
 */
export type NewChatQuotaEvent = { lease: SessionLease; phone: E164; at: Date } & (
  | { kind: 'read'; quota: NewChatQuota }
  /** `quota`: the quota as the engine knows it with the 475, where it does (the sandbox); else it is read after. */
  | { kind: 'capped'; detail: string; quota?: NewChatQuota }
);

/**
 * Where engines report what happens on the network. `incomingMessage` resolves once the message
 * is durably stored, so an engine may acknowledge it to the network only then.
 */
export interface EngineEvents {
  incomingMessage(event: IncomingMessageEvent): Promise<Message>;
  sessionStatusChanged(event: SessionStatusEvent): Promise<void>;
  receipt(event: ReceiptEvent): Promise<void>;
  /** Resolves once the action is stored (or found to name a message we do not have). */
  incomingAction(event: IncomingActionEvent): Promise<void>;
  /** A change in a group one of our numbers (`toPhone`) is in, or was just removed from. */
  groupChanged(event: GroupChange & { toPhone: E164 }): Promise<void>;
  /** Resolves once the number's pause is stored (or refused as coming from a stale session). */
  numberRestricted(event: NumberRestrictedEvent): Promise<void>;
  restrictionLifted(event: RestrictionLiftedEvent): Promise<void>;
  /** Resolves once the number's quota (and, on a 475, its hold and `number.capped` event) is stored. */
  newChatQuota(event: NewChatQuotaEvent): Promise<void>;
  /** LIDs with their phones, as the network told one of our numbers (`toPhone`), outside a message. */
  identitiesLearned(event: IdentitiesLearned): Promise<void>;
  /** A call to one of our numbers rang, or ended; resolves once it is reported (and, if the number says so, rejected). */
  incomingCall(event: IncomingCallEvent): Promise<void>;
  presenceUpdate(event: PresenceEvent): Promise<void>;
  /** Resolves once the vote is stored (or found to name a poll we do not have). */
  pollVote(event: IncomingPollVoteEvent): Promise<void>;
}

export interface IdentitiesLearned {
  toPhone: E164;
  identities: readonly { lid: string; phone: E164 }[];
  source: IdentitySource;
}
