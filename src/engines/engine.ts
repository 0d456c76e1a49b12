import type { Readable } from 'node:stream';
import type { CheckedPhone } from './recipient-directory.ts';
import type { EngineKind, Message, MessageContentKind, SessionLease, SessionStatus, WhatsAppNumber } from '../domain/model.ts';
import type { MediaKind } from '../domain/media.ts';
import type { StructuredContent } from '../domain/structured-content.ts';
import type { Group, GroupChange, GroupSettings, ParticipantAction, ParticipantResult } from '../domain/groups.ts';
import type { E164 } from '../domain/phone.ts';
import type { PauseReason } from '../domain/number-pauses.ts';
import type { IdentitySource } from '../domain/identities.ts';
import type { CallStatus } from '../domain/calls.ts';
import type { ContactPresence } from '../domain/presence.ts';
import type { BusinessProfile, ProfileChanges } from '../domain/profiles.ts';
import type { GroupMember as Contact } from '../domain/groups.ts';

/**
 * The engine port: what the gateway needs from a WhatsApp connection, in domain types only.
 * An engine serves many numbers; the session supervisor decides which engine serves which.
 */
export interface Engine {
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
  sendMessage(number: WhatsAppNumber, request: OutgoingMessage): Promise<SentMessage>;
  /** Reacts to `target`, or edits or revokes it (only our own messages). */
  sendAction(number: WhatsAppNumber, target: MessageRef, action: MessageAction): Promise<SentMessage>;
  /** Tells the sender of `targets` (incoming messages of one chat) that we read them. */
  markRead(number: WhatsAppNumber, targets: readonly MessageRef[]): Promise<void>;
  /** Archives, pins, mutes or marks unread a chat (or undoes it), as the number's phone would. */
  modifyChat(number: WhatsAppNumber, chat: ChatTarget, change: ChatChange): Promise<void>;
  /** Shows `state` ("typing…", "recording audio…", or neither) to the chat with `toPhone`. */
  sendPresence(number: WhatsAppNumber, toPhone: E164, state: ChatPresence): Promise<void>;
  /**
   * Whether phones use WhatsApp, from the engine's directory where it remembers, asking the
   * network for the rest. `admit` hears how many will be asked first, and may refuse by throwing.
   */
  checkNumbers(number: WhatsAppNumber, phones: readonly E164[], admit: (lookups: number) => void): Promise<CheckedPhone[]>;
  /** Creates a group with our number as its super admin; `participants` are phones to add. */
  createGroup(number: WhatsAppNumber, subject: string, participants: readonly E164[]): Promise<Group>;
  /** The groups the number belongs to, with their participants. */
  listGroups(number: WhatsAppNumber): Promise<Group[]>;
  /** One group the number belongs to; undefined when it does not (or the group does not exist). */
  groupInfo(number: WhatsAppNumber, groupId: string): Promise<Group | undefined>;
  /** Adds, removes, promotes or demotes participants (the number must be an admin); one result per phone. */
  updateParticipants(
    number: WhatsAppNumber,
    groupId: string,
    action: ParticipantAction,
    phones: readonly E164[],
  ): Promise<ParticipantResult[]>;
  /** Changes the group's subject and description (the number must be an admin). */
  updateGroupSettings(number: WhatsAppNumber, groupId: string, settings: GroupSettings): Promise<void>;
  /** The group's invite code, or (with `revoke`) a new one that replaces it. */
  inviteCode(number: WhatsAppNumber, groupId: string, revoke: boolean): Promise<string>;
  leaveGroup(number: WhatsAppNumber, groupId: string): Promise<void>;
  /** Asks WhatsApp to tell the number when `phone` comes online, goes away, or types to it (presenceUpdate events). */
  subscribePresence(number: WhatsAppNumber, phone: E164): Promise<void>;
  /** Shows the number online to its contacts, or not, as an open WhatsApp app does; kept for the session's next connections. */
  setOnline(number: WhatsAppNumber, online: boolean): Promise<void>;
  /** What a contact shows the number of itself: picture, about text, business profile; each null where it shows none. */
  contactProfile(number: WhatsAppNumber, phone: E164): Promise<ContactProfile>;
  /** Sets our number's display name, about text and picture, those given. */
  updateProfile(number: WhatsAppNumber, changes: ProfileChanges, picture?: OutgoingMedia): Promise<void>;
  /** Blocks a contact (WhatsApp then carries nothing of theirs to the number), or unblocks it. */
  updateBlock(number: WhatsAppNumber, phone: E164, blocked: boolean): Promise<void>;
  /** The contacts the number has blocked: by phone, or by LID where WhatsApp gives no phone. */
  blocklist(number: WhatsAppNumber): Promise<Contact[]>;
  /** Rejects a call that is ringing, as a person pressing "decline" on the phone would. */
  rejectCall(number: WhatsAppNumber, call: CallRef): Promise<void>;
  /** Fetches an incoming file again from its `IncomingMedia.retryToken`, through the number's session. */
  downloadAgain(number: WhatsAppNumber, retryToken: string): Promise<AsyncIterable<Buffer>>;
  /** Present only where `capabilities.simulatedInbound` is true. */
  readonly simulator?: InboundSimulator;
  /** Present only where `capabilities.linking` is true: starts linking a number to a phone. */
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
  structured?: StructuredContent;
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

/** A message as a simulated phone sends it to a sandbox number. */
export interface SimulatedIncoming {
  fromPhone: E164;
  text: string;
  media?: OutgoingMedia;
  structured?: StructuredContent;
  /** How many downloads of `media` fail before one succeeds, to rehearse the retries. */
  failedDownloads?: number;
  /** The network's id of the message the simulated phone answers. */
  quotedEngineId?: string;
  /** The group the simulated phone writes in, which both it and the number belong to. */
  groupId?: string;
  /** With `groupId`: the members the message mentions. */
  mentions?: E164[];
  /** The simulated phone's LID (`<digits>@lid`): the message is LID-addressed. */
  fromLid?: string;
  /** With `fromLid`: the network withholds the phone, as WhatsApp does for a LID-only sender. */
  withholdPhone?: boolean;
}

/** What the simulated network does to a number to rehearse WhatsApp's restrictions: a 463, or rate-overlimit on its sends, until `until`. */
export interface SimulatedRestriction {
  kind: 'restricted' | 'rate_overlimit';
  until: Date;
}

/** A call a simulated phone makes to a sandbox number; it rings until rejected, or for `ringsForMs`. */
export interface SimulatedCall {
  fromPhone: E164;
  video: boolean;
  /** The group the call is made in, which both the phone and the number belong to. */
  groupId?: string;
  /** How long it rings before it is missed, unless rejected first. */
  ringsForMs: number;
}

/** A vote a simulated phone casts on a poll of one of its chats with a sandbox number. */
export interface SimulatedPollVote {
  fromPhone: E164;
  /** The network's id of the poll. */
  pollEngineId: string;
  /** The options chosen; none takes the phone's vote back. */
  options: string[];
  /** The group the poll is in, when it is a group's. */
  groupId?: string;
}

export interface InboundSimulator {
  /** Produces an incoming message on `number` exactly as the network would, and waits until it is stored. */
  deliverIncoming(number: WhatsAppNumber, incoming: SimulatedIncoming): Promise<Message>;
  /** Has the network restrict the number as WhatsApp would, so that a client rehearses its `number.paused` handling. */
  restrict(number: WhatsAppNumber, restriction: SimulatedRestriction): Promise<void>;
  /** Rings `number` from a simulated phone; resolves with the call's id once the offer is reported. */
  placeCall(number: WhatsAppNumber, call: SimulatedCall): Promise<string>;
  /** Produces a vote on a poll of `number`, and waits until it is recorded. */
  deliverPollVote(number: WhatsAppNumber, vote: SimulatedPollVote): Promise<void>;
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
