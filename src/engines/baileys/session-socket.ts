import type {
  AnyMessageContent,
  AuthenticationState,
  ChatModification,
  BaileysEventEmitter,
  GroupMetadata,
  MiscMessageGenerationOptions,
  NewChatMessageCapInfo,
  proto,
  UserFacingSocketConfig,
  WAMessage,
  WAMessageKey,
  WAVersion,
  WABusinessProfile,
  WAMediaUpload,
} from 'baileys';
import makeWASocket from 'baileys';
import type { Logger } from 'pino';
import { cachedKeys } from './auth-state-store.ts';

/**
 * The part of a Baileys socket the session uses. Naming it lets the adapter tests inject a socket
 * that emits Baileys-shaped events, since WhatsApp itself cannot be reached from a test.
 */
export interface SessionSocket {
  ev: Pick<BaileysEventEmitter, 'on' | 'removeAllListeners'>;
  user?: { id: string; lid?: string } | undefined;
  end(error: Error | undefined): void;
  logout(): Promise<void>;
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<proto.IWebMessageInfo | undefined>;
  /** Archives, pins, mutes or marks a chat read or unread, through app-state sync to the number's devices. */
  chatModify(modification: ChatModification, jid: string): Promise<void>;
  /** Read receipts for incoming messages (blue ticks on the sender's phone). */
  readMessages(keys: WAMessageKey[]): Promise<void>;
  onWhatsApp(...phoneNumbers: string[]): Promise<CheckAnswer[] | undefined>;
  /** "typing…", "recording audio…", or neither, shown to one chat. */
  sendPresenceUpdate(type: 'available' | 'unavailable' | 'composing' | 'recording' | 'paused', toJid?: string): Promise<void>;
  /** Asks WhatsApp for a contact's presence updates (presence.update events). */
  presenceSubscribe(toJid: string): Promise<void>;
  requestPairingCode(phoneNumber: string): Promise<string>;
  signalRepository: { lidMapping: { getPNForLID(lid: string): Promise<string | null> } };
  groupCreate(subject: string, participants: string[]): Promise<GroupMetadata>;
  groupFetchAllParticipating(): Promise<{ [jid: string]: GroupMetadata }>;
  groupMetadata(jid: string): Promise<GroupMetadata>;
  /** Per participant: WhatsApp's error code as `status` ('200' when done) and the participant's JID. */
  groupParticipantsUpdate(
    jid: string,
    participants: string[],
    action: 'add' | 'remove' | 'promote' | 'demote',
  ): Promise<Array<{ status: string; jid?: string }>>;
  groupUpdateSubject(jid: string, subject: string): Promise<void>;
  groupUpdateDescription(jid: string, description?: string): Promise<void>;
  groupInviteCode(jid: string): Promise<string | undefined>;
  groupRevokeInvite(jid: string): Promise<string | undefined>;
  groupLeave(jid: string): Promise<void>;
  /**
   * Asks WhatsApp whether the account is under a reach-out time lock; Baileys emits the answer as
   * connection.update's `reachoutTimeLock`, as it does WhatsApp's own notification of one.
   */
  fetchAccountReachoutTimelock(): Promise<unknown>;
  /** The URL of a contact's profile picture (WhatsApp's CDN), or undefined when it shows none. */
  profilePictureUrl(jid: string, type?: 'preview' | 'image', timeoutMs?: number): Promise<string | undefined>;
  fetchStatus(...jids: string[]): Promise<Array<{ id: string; status?: unknown }> | undefined>;
  getBusinessProfile(jid: string): Promise<WABusinessProfile | undefined>;
  updateProfileName(name: string): Promise<void>;
  updateProfileStatus(status: string): Promise<void>;
  updateProfilePicture(jid: string, content: WAMediaUpload): Promise<void>;
  updateBlockStatus(jid: string, action: 'block' | 'unblock'): Promise<void>;
  /** The JIDs the number has blocked (phone JIDs, or LIDs). */
  fetchBlocklist(): Promise<(string | undefined)[]>;
  /** Declines a call that is ringing; `callFrom` is the caller's JID as the call named it. */
  rejectCall(callId: string, callFrom: string): Promise<void>;
  /** Asks the sender's phone to upload a file again, when its link on WhatsApp's servers has expired. */
  updateMediaMessage(message: WAMessage): Promise<WAMessage>;
  /** WhatsApp's new-chat cap of the account: its quota, what is used and the cycle (every field optional). */
  fetchNewChatMessageCap(): Promise<NewChatMessageCapInfo>;
}

/** A number check's answer per phone; `lid` where WhatsApp names the phone's LID too. */
interface CheckAnswer {
  jid: string;
  exists: boolean;
  lid?: string;
}

export interface SocketOptions {
  auth: AuthenticationState;
  logger: Logger;
  /** Looks up a message we sent, for WhatsApp's retry requests. */
  getMessage(id: string): proto.IMessage | undefined;
  /** A group's metadata as the session remembers it, so that a send to it does not ask WhatsApp. */
  cachedGroupMetadata(jid: string): GroupMetadata | undefined;
  /** Whether the number shows itself online as the socket connects (its show_online setting). */
  markOnlineOnConnect: boolean;
  /** The WhatsApp Web version to announce; undefined uses Baileys' default. */
  version: WAVersion | undefined;
}

export type SocketFactory = (options: SocketOptions) => SessionSocket;

/** The real socket, configured against the failure modes other gateways' users report. */
export const createBaileysSocket: SocketFactory = (options) => {
  const config: UserFacingSocketConfig = {
    auth: { creds: options.auth.creds, keys: cachedKeys(options.auth.keys, options.logger) },
    // Baileys narrates every connection attempt at info level; the session logs what matters,
    // one line per reconnect step, so only Baileys' warnings and errors pass through.
    logger: options.logger.child({ component: 'baileys' }, { level: 'warn' }),
    // Online presence silences the phone's own notifications, so a number shows itself online
    // only when its show_online setting asks (ADR 0033).
    markOnlineOnConnect: options.markOnlineOnConnect,
    // No full history: a gateway relays new messages, and a full sync is what makes memory grow.
    // The smaller initial syncs stay on (Baileys' default): they carry the LID-to-phone mappings.
    syncFullHistory: false,
    getMessage: async (key) => (key.id ? options.getMessage(key.id) : undefined),
    cachedGroupMetadata: async (jid) => options.cachedGroupMetadata(jid),
    ...(options.version !== undefined && { version: options.version }),
  };
  return makeWASocket(config) as unknown as SessionSocket;
};
