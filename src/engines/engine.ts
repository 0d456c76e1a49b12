import type { Readable } from 'node:stream';
import type { CheckedPhone } from './recipient-directory.ts';
import type { EngineKind, SessionLease, SessionStatus, WhatsAppNumber } from '../domain/model.ts';
import type { MediaKind } from '../domain/media.ts';
import type { SendableContent } from '../domain/structured-content.ts';
import type { Group, GroupSettings, ParticipantAction, ParticipantResult } from '../domain/groups.ts';
import type { E164 } from '../domain/phone.ts';
import type { BusinessProfile, ProfileChanges } from '../domain/profiles.ts';
import type { GroupMember as Contact } from '../domain/groups.ts';
import type { InboundSimulator } from './inbound-simulator.ts';
import type { NewChatQuota } from '../domain/new-chat-quota.ts';
import type { MessageTemplate } from '../domain/templates.ts';
import type { OptionalContent } from './capability-declined.ts';

export type { NewChatQuota };

/**
 * A number's session, as the gateway acts through it (ADR 0059): each capability of WhatsApp the
 * API reaches, for that one number. A new capability is a method here, its engines'
 * implementations and the operation that calls it; nothing between the API and the engine
 * forwards it by name (registry.ts and session-supervisor.ts forward every method alike).
 *
 * An engine that cannot do one of these declines it explicitly: its implementation throws
 * `capabilityDeclined` (capability-declined.ts), which the API answers 422
 * capability_not_supported.
 */
export interface EngineSession {
  sendMessage(request: OutgoingMessage): Promise<SentMessage>;
  /** Reacts to `target`, or edits or revokes it (only our own messages). */
  sendAction(target: MessageRef, action: MessageAction): Promise<SentMessage>;
  /** Tells the sender of `targets` (incoming messages of one chat) that we read them. */
  markRead(targets: readonly MessageRef[]): Promise<void>;
  /** Archives, pins, mutes or marks unread a chat (or undoes it), as the number's phone would. */
  modifyChat(chat: ChatTarget, change: ChatChange): Promise<void>;
  /** Shows `state` ("typing…", "recording audio…", or neither) to the chat with `toPhone`. */
  sendPresence(toPhone: E164, state: ChatPresence): Promise<void>;
  /**
   * Whether phones use WhatsApp, from the engine's directory where it remembers, asking the
   * network for the rest. `admit` hears how many will be asked first, and may refuse by throwing.
   */
  checkNumbers(phones: readonly E164[], admit: (lookups: number) => void): Promise<CheckedPhone[]>;
  /** Creates a group with our number as its super admin; `participants` are phones to add. */
  createGroup(subject: string, participants: readonly E164[]): Promise<Group>;
  /** The groups the number belongs to, with their participants. */
  listGroups(): Promise<Group[]>;
  /** One group the number belongs to; undefined when it does not (or the group does not exist). */
  groupInfo(groupId: string): Promise<Group | undefined>;
  /** Adds, removes, promotes or demotes participants (the number must be an admin); one result per phone. */
  updateParticipants(groupId: string, action: ParticipantAction, phones: readonly E164[]): Promise<ParticipantResult[]>;
  /** Changes the group's subject and description (the number must be an admin). */
  updateGroupSettings(groupId: string, settings: GroupSettings): Promise<void>;
  /** The group's invite code, or (with `revoke`) a new one that replaces it. */
  inviteCode(groupId: string, revoke: boolean): Promise<string>;
  leaveGroup(groupId: string): Promise<void>;
  /** Asks WhatsApp to tell the number when `phone` comes online, goes away, or types to it (presenceUpdate events). */
  subscribePresence(phone: E164): Promise<void>;
  /** Shows the number online to its contacts, or not, as an open WhatsApp app does; kept for the session's next connections. */
  setOnline(online: boolean): Promise<void>;
  /** What a contact shows the number of itself: picture, about text, business profile; each null where it shows none. */
  contactProfile(phone: E164): Promise<ContactProfile>;
  /** Sets our number's display name, about text and picture, those given. */
  updateProfile(changes: ProfileChanges, picture?: OutgoingMedia): Promise<void>;
  /** Blocks a contact (WhatsApp then carries nothing of theirs to the number), or unblocks it. */
  updateBlock(phone: E164, blocked: boolean): Promise<void>;
  /** The contacts the number has blocked: by phone, or by LID where WhatsApp gives no phone. */
  blocklist(): Promise<Contact[]>;
  /** Rejects a call that is ringing, as a person pressing "decline" on the phone would. */
  rejectCall(call: CallRef): Promise<void>;
  /** Fetches an incoming file again from its `IncomingMedia.retryToken`, through the number's session. */
  downloadAgain(retryToken: string): Promise<AsyncIterable<Buffer>>;
  /** How many new chats WhatsApp still lets the number start in its current cycle (ADR 0058). */
  newChatQuota(): Promise<NewChatQuota>;
  /** The message templates of the number's business account, every status (Cloud API numbers; docs/cloud-api.md#templates). */
  listTemplates(): Promise<MessageTemplate[]>;
}

/** A capability of the session, by name. */
export type SessionCapability = keyof EngineSession;

/**
 * The session's capabilities as an engine implements them for all its numbers at once: each
 * takes the number first. An engine keeps its sessions' state by number, so this is its natural
 * shape; the supervisor's `sessionFor` binds one number (session-binding.ts).
 */
export type ForEachNumber<Session> = {
  [Name in keyof Session]: Session[Name] extends (...args: infer Args) => infer Result
    ? (number: WhatsAppNumber, ...args: Args) => Result
    : never;
};

/**
 * The engine port: what the gateway needs from a WhatsApp connection, in domain types only.
 * An engine serves many numbers; the session supervisor decides which engine serves which.
 */
export interface Engine extends ForEachNumber<EngineSession> {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  /** The status a newly added number of this engine starts in. */
  readonly initialStatus: SessionStatus;
  /**
   * Starts the number's session under the node's lease on it. Everything the session writes that
   * only the owner may write (its status, receipts, Baileys' keys) carries the lease, so that a
   * session this node no longer owns cannot overwrite the new owner's state.
   */
  start(number: WhatsAppNumber, lease: SessionLease): Promise<void>;
  stop(number: WhatsAppNumber): Promise<void>;
  /** The live status of the number's session, as the engine sees it now. */
  sessionStatus(number: WhatsAppNumber): SessionStatus;
  /** Present only where `capabilities.simulatedInbound` is true. */
  readonly simulator?: InboundSimulator;
  /**
   * Links a number to a phone, and logs it out: present where `capabilities.linking` is true,
   * and on the sandbox, whose numbers connect without linking but may be linked to rehearse it.
   */
  readonly linker?: SessionLinker;
}

/** What a linking operator sees, as it changes: a QR to scan, or a pairing code, and the status. */
export interface LinkUpdate {
  qr?: string;
  pairingCode?: string;
  status: SessionStatus;
  reason?: string | null;
}

/**
 * Statuses that end a linking attempt for good. `disconnected` counts too: while linking, the
 * gateway does not retry on its own, so that a bad network never turns into a QR loop; the
 * operator starts again.
 */
export function endsLinking(status: SessionStatus): boolean {
  return status === 'link_expired' || status === 'logged_out' || status === 'conflict' || status === 'failed' || status === 'disconnected';
}

export interface LinkSession {
  onUpdate(listener: (update: LinkUpdate) => void): () => void;
  /** An 8-character code to type on the phone, instead of scanning the QR. */
  requestPairingCode(): Promise<string>;
  stop(): Promise<void>;
}

export interface SessionLinker {
  link(number: WhatsAppNumber, lease: SessionLease): Promise<LinkSession>;
  /** Unlinks the number's phone, as "Log out" on the phone does: the session ends as `logged_out` and must be linked again. */
  logout(number: WhatsAppNumber, lease: SessionLease): Promise<void>;
}

export interface EngineCapabilities {
  /** Incoming messages can be produced on demand, for tests and demos (the sandbox). */
  simulatedInbound: boolean;
  /** The operator may set the session status by hand, to rehearse outages. */
  simulatedSessionStatus: boolean;
  /** Numbers are linked to a phone (QR or pairing code) before they connect. */
  linking: boolean;
  /**
   * Opening a session costs the network something (a login to WhatsApp), so a node that takes
   * over many numbers starts them one after another rather than all at once.
   */
  staggeredStart: boolean;
  /** What a message of this engine cannot carry: declined with a 422 before it is stored or sent. */
  uncarried: readonly OptionalContent[];
}

/** A message to one phone, or to a group our number is in. */
export type OutgoingMessage = OutgoingDirectMessage | OutgoingGroupMessage;

interface OutgoingContent {
  /** The text, or the caption of `media` (which may be empty), or a location's comment. */
  text: string;
  media?: OutgoingMedia;
  /**
   * A location, contact cards or a poll instead of a text; beside `media`, that it is view-once;
   * beside a text, its link preview.
   */
  structured?: SendableContent;
  /** A small JPEG shown beside the link preview. */
  linkPreviewThumbnail?: Buffer;
  /** The message this one answers, shown quoted above it. */
  replyTo?: MessageRef;
}

interface OutgoingDirectMessage extends OutgoingContent {
  toPhone: E164;
}

export interface OutgoingGroupMessage extends OutgoingContent {
  /** WhatsApp's id of the group (`…@g.us`). */
  toGroup: string;
  /** Members the message mentions, which their phones highlight; already checked to be members. */
  mentions: readonly E164[];
}

export function isGroupMessage(message: OutgoingMessage): message is OutgoingGroupMessage {
  return 'toGroup' in message;
}

/** A message of a chat as the network knows it. */
export interface MessageRef {
  /** The other side of a direct chat; in a group, our own number. */
  chatPhone: E164;
  /** The group chat it belongs to, if any. */
  groupId?: string;
  /** In a group, who sent it when that is not us: a phone, or a LID (`…@lid`) when the phone is unknown. */
  participant?: string;
  engineMessageId: string;
  /** Sent by our number, rather than received from `chatPhone`. */
  fromMe: boolean;
  /** Its text, which a quote shows. */
  text: string;
}

/** A chat as the network names it: a phone, a LID or a group id, and its last message, which archiving and read marks name. */
export interface ChatTarget {
  chatId: string;
  /** In a group, `participant` is the member who wrote it (phone or LID) when that is not us. */
  lastMessage: { engineMessageId: string; fromMe: boolean; participant?: string; at: Date };
}

/** A change of a chat's state; `mute.until` null unmutes. */
export type ChatChange =
  | { kind: 'archive'; archived: boolean }
  | { kind: 'pin'; pinned: boolean }
  | { kind: 'mute'; until: Date | null }
  | { kind: 'mark_unread'; unread: boolean };

/** What one message does to another: a reaction (an empty emoji takes ours away), an edit, a revocation. */
export type MessageAction = { kind: 'react'; emoji: string } | { kind: 'edit'; text: string } | { kind: 'revoke' };

/** A stored file to send, with what WhatsApp needs to present it. */
export interface OutgoingMedia {
  kind: MediaKind;
  mimeType: string;
  fileName: string | null;
  size: number;
  /** The bytes in memory, for an engine that carries them whole (the sandbox); read only when it sends. */
  read(): Promise<Buffer>;
  /** The bytes as a stream, for an engine that can send one without holding the file (Baileys). */
  open(): Promise<Readable>;
}

/** A file that came with an incoming message, as the engine got it. */
export interface IncomingMedia {
  kind: MediaKind;
  /** The type the sender's client declared; the gateway checks it against the bytes. */
  mimeType: string | null;
  fileName: string | null;
  /** Fetches the bytes (from WhatsApp's servers, for a real number). */
  download(): Promise<AsyncIterable<Buffer>>;
  /**
   * What the engine needs to fetch the file again later, even after a restart
   * (`Engine.downloadAgain`); null when a failed download cannot be tried again.
   */
  retryToken: string | null;
}

/** What a chat is shown of us: typing, recording a voice note, or neither. */
export type ChatPresence = 'composing' | 'recording' | 'paused';

/** The engine can no longer fetch an incoming file at all, so trying again is pointless. */
export class MediaGoneError extends Error {}

export interface SentMessage {
  engineMessageId: string;
  /** The lease of the session that sent it: the `sent` transition is written under it. */
  lease: SessionLease;
  /** For a poll: the secret its votes are encrypted with (base64), where the network encrypts them. */
  pollSecret?: string;
}

/** Why an engine refused a send. The messaging service turns these into API errors. */
export type EngineSendFailure =
  | 'sender_blocked'
  | 'not_connected'
  | 'rejected'
  | 'recipient_not_on_whatsapp'
  | 'not_group_member'
  | 'not_group_admin'
  | 'rate_limited'
  | 'restricted';

export class EngineSendError extends Error {
  constructor(
    readonly failure: EngineSendFailure,
    message: string,
    readonly sessionStatus?: SessionStatus,
  ) {
    super(message);
    this.name = 'EngineSendError';
  }
}

/** A contact's profile as the engine fetched it. */
export interface ContactProfile {
  about: string | null;
  aboutSetAt: Date | null;
  /** The profile picture: `version` tells one picture from the next, so that an unchanged one is not fetched again. */
  picture: { version: string; download(): Promise<AsyncIterable<Buffer>> } | null;
  business: BusinessProfile | null;
}

/** What an engine needs to act on a call: its id and the caller's address on the network. */
export interface CallRef {
  callId: string;
  caller: string;
}
