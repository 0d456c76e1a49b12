import type { ApiKeyScope } from './api-key-scopes.ts';
import type { StructuredContent } from './structured-content.ts';
import type { AdReferral } from './referral.ts';
import type { MediaKind } from './media.ts';
import type { E164 } from './phone.ts';
import type { PlanName } from './plans.ts';

/** `cloud`: Meta's WhatsApp Cloud API (docs/cloud-api.md). */
export type EngineKind = 'sandbox' | 'baileys' | 'cloud';
export const engineKinds: readonly EngineKind[] = ['sandbox', 'baileys', 'cloud'];

export type SessionStatus = 'connected' | 'connecting' | 'disconnected' | 'logged_out' | 'link_expired' | 'conflict' | 'failed';
export const sessionStatuses: readonly SessionStatus[] = [
  'connected',
  'connecting',
  'disconnected',
  'logged_out',
  'link_expired',
  'conflict',
  'failed',
];

export type UserRole = 'owner' | 'admin' | 'member';
export const userRoles: readonly UserRole[] = ['owner', 'admin', 'member'];

/** The roles above `role`: what a user of that role may not grant (an invite for one, say). */
export function rolesAbove(role: UserRole): UserRole[] {
  return userRoles.slice(0, userRoles.indexOf(role));
}

export type MessageDirection = 'outbound' | 'inbound';
/** Plain text, or the caption of a media message; the media itself is not carried. */
/**
 * What a message carries: text, or a media file of its kind with `text` as the caption. The
 * `*_caption` kinds are those of incoming media stored before the gateway kept media: the
 * caption only.
 */
export type MessageContentKind =
  | 'text'
  | MediaKind
  | 'location'
  | 'contact'
  | 'poll'
  /** A message WhatsApp announced but whose content never came (an ad's first message the phone did not send again). */
  | 'unavailable'
  | 'image_caption'
  | 'video_caption'
  | 'document_caption';
/**
 * `unknown`: a send whose outcome the gateway could not record (its database refused the commit
 * for longer than the retries, or a crash cut it off before the engine's answer was stored).
 */
/**
 * `cancelled` and `expired`: a message the send governor held in its number's queue that was
 * cancelled, or whose expires_at passed, before it left; it was never sent.
 */
export type MessageStatus = 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'unknown' | 'received' | 'cancelled' | 'expired';

export interface Account {
  id: string;
  name: string;
  plan: PlanName;
  customMonthlyLimit: number | null;
  createdAt: Date;
}

export interface User {
  id: string;
  accountId: string | null;
  email: string;
  role: UserRole;
  isOperator: boolean;
  createdAt: Date;
}

export interface WhatsAppNumber {
  id: string;
  accountId: string;
  holderUserId: string | null;
  phone: E164;
  engine: EngineKind;
  status: SessionStatus;
  /** Why the status is what it is, when there is more to say (e.g. "set by the operator"). */
  statusReason: string | null;
  /** Incoming messages are marked read as soon as they are stored. */
  autoRead: boolean;
  /** Calls to the number are rejected as they ring (ADR 0033). */
  rejectCalls: boolean;
  /** What a caller whose call was rejected is sent, if anything. */
  callReplyText: string | null;
  /** The number shows itself online to its contacts, as an open WhatsApp app does. */
  showOnline: boolean;
  /**
   * The proxy its WhatsApp connection goes through, redacted (scheme://***@host:port, ADR 0063);
   * null connects directly. The full URL is sealed and only the engine opens it.
   */
  proxy: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** When `status` last changed: the number has been connected, or down, since then. */
  statusChangedAt: Date;
}

/**
 * A number as it is first added: held by nobody, with every setting off, created and updated
 * `at`. What is given replaces those defaults.
 */
export function newWhatsAppNumber(
  fields: Pick<WhatsAppNumber, 'id' | 'accountId' | 'phone' | 'engine' | 'status'> & Partial<WhatsAppNumber>,
  at = new Date(),
): WhatsAppNumber {
  return {
    holderUserId: null,
    statusReason: null,
    autoRead: false,
    rejectCalls: false,
    callReplyText: null,
    showOnline: false,
    proxy: null,
    createdAt: at,
    updatedAt: at,
    statusChangedAt: at,
    ...fields,
  };
}

/**
 * A node's hold on a number's session (docs/adr/0018-cluster-leases.md). Every write that only
 * the owner may make carries it, and the database refuses one whose epoch is no longer current.
 */
export interface SessionLease {
  numberId: string;
  nodeId: string;
  epoch: number;
}

/** What a node knows of its leases: its own id, and the lease it holds on a number now. */
export interface LeaseView {
  readonly nodeId: string;
  leaseOf(numberId: string): SessionLease | undefined;
}

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  hint: string;
  createdByUserId: string | null;
  /** Who made it, kept when that user is removed (createdByUserId becomes null then). */
  createdByEmail: string | null;
  /** What the key may do, chosen when it is made (domain/api-key-scopes.ts). */
  scopes: readonly ApiKeyScope[];
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface Message {
  id: string;
  accountId: string;
  /** Null once the number has been removed; the history stays with the account. */
  numberId: string | null;
  direction: MessageDirection;
  /** Null only for an inbound message whose LID-addressed sender could not be resolved to a phone. */
  fromPhone: E164 | null;
  /** The sender's LID (`<digits>@lid`) when WhatsApp addressed the sender by LID; null otherwise. */
  fromLid: string | null;
  toPhone: E164;
  text: string;
  contentKind: MessageContentKind;
  /** The media object the message carries; null for text. */
  mediaId: string | null;
  /** A shared location or contact cards; null for everything else. */
  structured: StructuredContent | null;
  status: MessageStatus;
  engineMessageId: string | null;
  createdAt: Date;
  /** When it reached each status, and its latest edit and revocation; absent on one not yet stored. */
  times?: MessageTimes;
  /** What it answers, when it is a reply and that is known (read separately from the row). */
  replyTo?: QuotedMessage | null;
  /**
   * The group chat it belongs to, or null for a direct message (read separately from the row).
   * A group message's `toPhone` is our number: the group itself is the recipient.
   */
  group?: MessageGroup | null;
  /** The members a group message mentions: phones, or LIDs where WhatsApp gave no phone. */
  mentions?: readonly string[];
  /** The ad or post the person came from, on an incoming message that carried it (read separately from the row). */
  referral?: AdReferral | null;
}

/** A group chat as a message names it: WhatsApp's id for the group, and its subject when the message was stored (null if unknown). */
export interface MessageGroup {
  id: string;
  subject: string | null;
}

/** What a reply quotes: our message when it is stored here, and WhatsApp's id for it always. */
export interface QuotedMessage {
  messageId: string | null;
  engineMessageId: string;
}

/** An incoming message's `read` is when we read it; the rest are a sent message's. */
interface MessageTimes {
  sent: Date | null;
  delivered: Date | null;
  read: Date | null;
  failed: Date | null;
  edited: Date | null;
  revoked: Date | null;
  /** When a message that waited in its number's queue left it unsent, as `cancelled` or `expired`. */
  unsent: Date | null;
}

/**
 * The sender as WhatsApp addressed them: the phone when it is known, otherwise the LID. Every
 * stored message has one or the other, which the receive path guarantees.
 */
export function senderAddress(message: Pick<Message, 'fromPhone' | 'fromLid'>): string {
  return message.fromPhone ?? message.fromLid ?? '';
}
