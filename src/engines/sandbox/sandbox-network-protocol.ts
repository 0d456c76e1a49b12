import type { StructuredContent } from '../../domain/structured-content.ts';
import type { AdReferral } from '../../domain/referral.ts';
import type { Group, GroupChange, ParticipantResult } from '../../domain/groups.ts';
import type { GroupOperation } from './sandbox-groups.ts';

// What the simulated network and an engine session say to each other, in one process or over
// the shared network's line protocol (sandbox-network-server.ts): its messages, devices,
// connections and refusals.

/** A message on the simulated network, as the receiving device gets it. */
export interface NetworkMessage {
  id: string;
  from: string;
  to: string;
  text: string;
  sentAt: number;
  media?: NetworkMedia;
  /** A shared location or contact cards, carried as they are. */
  structured?: StructuredContent;
  /** The id of the message this one quotes. */
  quoted?: string;
  /** What this message does to an earlier one of the chat, rather than being one itself. */
  action?: NetworkAction;
  /** The group it was written in: each member's device gets its own copy, with this. */
  group?: { id: string; subject: string };
  /** The members it mentions, by phone. */
  mentions?: string[];
  /**
   * The sender's LID, as WhatsApp names a LID-addressed sender; with `phoneHidden`, the phone
   * is withheld (WhatsApp gave only the LID), so a sandbox can rehearse learning it later.
   */
  senderLid?: string;
  phoneHidden?: boolean;
  /** The ad the sender tapped before writing (ADR 0051). */
  referral?: AdReferral;
  /** Delivered as a placeholder whose content never comes, as WhatsApp sometimes does an ad's first message. */
  unavailable?: boolean;
}

/**
 * A reaction to `target` (an empty emoji takes it away), an edit of it (to the message's text),
 * its revocation, or a vote on it as a poll (`options` chosen; none takes the vote back).
 */
export interface NetworkAction {
  kind: 'react' | 'edit' | 'revoke' | 'vote';
  target: string;
  emoji?: string;
  options?: string[];
}

/** A message's extras on the way out: its quote, the action it carries, the members it mentions, its sender's LID, its place, cards or poll. */
export type NetworkExtras = Pick<
  NetworkMessage,
  'quoted' | 'action' | 'mentions' | 'senderLid' | 'phoneHidden' | 'structured' | 'referral' | 'unavailable'
>;

/** A file on the simulated network: carried with its message, base64 so that it crosses the shared network's JSON lines as it is. */
export interface NetworkMedia {
  kind: string;
  mimeType: string;
  fileName: string | null;
  base64: string;
  /** How many downloads fail before one succeeds: a file that arrives late, simulated. */
  failedDownloads?: number;
}

export interface NetworkReceipt {
  id: string;
  status: 'delivered' | 'read';
}

/**
 * A restriction the network puts on a number, to rehearse WhatsApp's: `restricted` is a 463
 * (pushed to the number's device at once, as WhatsApp's notification is, and answered to its
 * sends), `rate_overlimit` answers its sends with rate-overlimit. `new_chat_cap` is WhatsApp's
 * cap on new chats (ADR 0058): the number may write to `newChats` people who never wrote to it,
 * and its next send to another is refused with 475, until the cycle ends. All last until `until`
 * (epoch milliseconds).
 */
export interface NetworkRestriction {
  kind: 'restricted' | 'rate_overlimit' | 'new_chat_cap';
  until: number;
  /** With `new_chat_cap`: the cycle's quota of new chats, and (in a refusal) how many were used. */
  newChats?: number;
  used?: number;
}

/** What a number's live connection hears from the network. */
export interface NetworkDevice {
  /** Resolves once the device has stored the message; only then does the network forget it. */
  incoming(message: NetworkMessage): Promise<void>;
  /**
   * A receipt for one of this number's messages. A promise it returns resolves once the receipt
   * is recorded, and only then does the network forget it; a rejection, or the connection
   * closing first, makes the network hand it over again (HeldReceipts).
   */
  receipt(receipt: NetworkReceipt): Promise<void> | void;
  /** Another connection of the same number took over (WhatsApp's 440 conflict); this one is closed. */
  replaced(): void;
  /** The way to the network broke (a shared network restarting): the session should connect again. */
  lost?(): void;
  /** Something changed in a group the number is in (or was just removed from). */
  groupChanged?(change: GroupChange): void;
  /** The network restricted the number (a rehearsal of WhatsApp's 463 with a lift time). */
  restricted?(restriction: NetworkRestriction): void;
}

export interface NetworkConnection {
  /**
   * `media` is read only if the network needs the bytes: a phone outside the sandbox acknowledges
   * without them, as a real handset's download is no business of the sender's.
   */
  send(to: string, text: string, media?: () => Promise<NetworkMedia>, extras?: NetworkExtras): Promise<{ id: string }>;
  /** Tells `to` that its messages `ids` were read; a phone outside the gateway hears nothing. */
  markRead(to: string, ids: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** The simulated WhatsApp as an engine session sees it, whether in this process or shared. */
export interface SandboxNetworkPort {
  connect(phone: string, node: string, device: NetworkDevice): Promise<NetworkConnection>;
  /**
   * Makes `phone` a number of the gateway before its first connection, so that messages for it
   * are kept until it connects rather than taken by an outside handset.
   */
  expect(phone: string): Promise<void>;
  /** The network's groups: made by a connected number, seen only by their members. */
  createGroup(creator: string, subject: string, participants: readonly string[]): Promise<Group>;
  groupsOf(phone: string): Promise<Group[]>;
  groupSeenBy(phone: string, id: string): Promise<Group | undefined>;
  /** An admin's change to a group, or a member leaving; refused with GroupRefusedError. */
  manageGroup(actor: string, id: string, operation: GroupOperation): Promise<{ results?: ParticipantResult[]; code?: string }>;
  /**
   * Delivers a message from any phone to `to`, resolving with its id once the recipient stored
   * it. With `inGroup`, the phone writes in that group (both must be members), and every other
   * member gets the message too.
   */
  inject(
    from: string,
    to: string,
    text: string,
    media?: NetworkMedia,
    structured?: StructuredContent,
    extras?: NetworkExtras,
    inGroup?: string,
  ): Promise<{ id: string }>;
  /** Restricts `phone` until the restriction's `until`, as WhatsApp would (see NetworkRestriction). */
  restrict(phone: string, restriction: NetworkRestriction): Promise<void>;
  /** `phone` blocks (or unblocks) `contact`: the network then carries nothing from `contact` to `phone`. */
  setBlocked(phone: string, contact: string, blocked: boolean): Promise<void>;
  /** The phones `phone` has blocked, in the order it blocked them. */
  blocklistOf(phone: string): Promise<string[]>;
}

type JournalKind = 'connect' | 'replace' | 'disconnect' | 'send' | 'deliver' | 'read';

/** One thing the network saw, for tests and for the operator. */
export interface JournalEntry {
  seq: number;
  at: number;
  kind: JournalKind;
  phone: string;
  node: string;
  /** The message's id, for send and deliver. */
  id?: string;
  to?: string;
  text?: string;
}

/** A send to (or in) a group by a phone that is not one of its members. */
export class NotGroupMemberError extends Error {
  constructor(phone: string, group: string) {
    super(`${phone} is not a member of group ${group}.`);
    this.name = 'NotGroupMemberError';
  }
}

/** A restriction as it crosses the shared network's lines. */
export function networkRestriction(value: Record<string, unknown>): NetworkRestriction {
  if (value.kind === 'new_chat_cap')
    return {
      kind: 'new_chat_cap',
      until: Number(value.until),
      newChats: Number(value.newChats ?? 0),
      ...(value.used !== undefined && { used: Number(value.used) }),
    };
  return { kind: value.kind === 'rate_overlimit' ? 'rate_overlimit' : 'restricted', until: Number(value.until) };
}

/** A send the network refused because it restricted the sender (NetworkRestriction). */
export class SendRestrictedError extends Error {
  constructor(readonly restriction: NetworkRestriction) {
    super(
      restriction.kind === 'restricted'
        ? 'The sandbox network restricted this number (463).'
        : restriction.kind === 'new_chat_cap'
          ? 'The sandbox network capped the new chats of this number (475).'
          : 'The sandbox network is rate-limiting this number (rate-overlimit).',
    );
    this.name = 'SendRestrictedError';
  }
}

/** A message from a phone its recipient has blocked, which a simulated phone tried to deliver. */
export class BlockedSenderError extends Error {
  constructor(from: string, to: string) {
    super(`${to} has blocked ${from}; the network does not deliver its messages.`);
    this.name = 'BlockedSenderError';
  }
}

export class NotConnectedError extends Error {
  constructor(phone: string) {
    super(`${phone} has no live connection to the sandbox network.`);
    this.name = 'NotConnectedError';
  }
}

/**
 * The shared network could not be asked: it cannot be reached, or its connection closed while a
 * request was on it. `delivered` says whether the request may have arrived (it was written
 * before the connection closed) or surely did not (no connection to write it on).
 */
export class NetworkUnreachableError extends Error {
  constructor(
    message: string,
    readonly delivered: boolean,
  ) {
    super(message);
    this.name = 'NetworkUnreachableError';
  }
}

/** One line of the shared network's protocol as the object it must be, or undefined for anything else. */
export function parseProtocolLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
