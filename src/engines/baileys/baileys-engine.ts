import { AppError } from '../../domain/errors.ts';
import type { Logger } from 'pino';
import type { SessionLease, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import type { Store } from '../../store/database.ts';
import type { SecretBox } from '../../secrets/secret-box.ts';
import { messageOfRetryToken } from './media-retry-token.ts';
import { memberOf, mentionJids, toGroup } from './group-mapper.ts';
import { aboutOf, businessOf } from './profile-mapper.ts';
import type { ProfileChanges } from '../../domain/profiles.ts';
import type { Group, GroupMember as Contact, GroupSettings, ParticipantAction, ParticipantResult } from '../../domain/groups.ts';
import { groupRefusal, participantOutcomes } from './group-admin.ts';
import {
  EngineSendError,
  isGroupMessage,
  type ChatPresence,
  type Engine,
  type ChatChange,
  type ChatTarget,
  type MessageAction,
  type MessageRef,
  type OutgoingMessage,
  type SentMessage,
  type SessionLinker,
  type CallRef,
  type ContactProfile,
  type OutgoingMedia,
  type NewChatQuota,
} from '../engine.ts';
import type { EngineEvents } from '../engine-events.ts';
import { createDatabaseAuthState, isLinked } from './auth-state-store.ts';
import { BaileysSession, type SessionTimings } from './baileys-session.ts';
import { toActionContent, toChatJid, toChatModification, toMessageKey, toQuoted, toRecipientJid } from './outbound-mapper.ts';
import { isJidGroup, type AnyMessageContent, type MiscMessageGenerationOptions } from 'baileys';
import { failedCapRead, NEW_CHAT_CAPPED_CODE } from './capping-mapper.ts';
import { RecipientDirectory, type CheckedPhone } from '../recipient-directory.ts';
import { SendPacer, type PacingOptions } from './send-pacer.ts';
import { createBaileysSocket, type SocketFactory } from './session-socket.ts';
import { DEFAULT_RECONNECT_POLICY } from './reconnect-policy.ts';
import { ACCOUNT_RESTRICTED_CODE, RATE_LIMIT_PAUSE_MS } from './restrictions.ts';
import { BAILEYS_ENGINE } from './descriptor.ts';
import { declineUncarried, declinedMetaCapabilities } from '../capability-declined.ts';
import { parseProxyUrl, type ProxyUrl } from '../../domain/proxy-url.ts';
import { findSealedProxy } from '../../store/repositories/numbers.ts';
import { hiddenOrNone, pictureAt } from './contact-profiles.ts';
import { contentOf } from './outgoing-content.ts';
import { lookupOn } from './recipient-lookup.ts';

export interface BaileysEngineOptions {
  store: Store;
  secretBox: SecretBox;
  events: EngineEvents;
  logger: Logger;
  pacing: PacingOptions;
  /** WhatsApp Web version override, e.g. [2, 3000, 1023223821]; undefined uses Baileys' own. */
  version: [number, number, number] | undefined;
  socketFactory?: SocketFactory;
  timings?: Partial<SessionTimings>;
}

const DEFAULT_TIMINGS: SessionTimings = {
  reconnect: DEFAULT_RECONNECT_POLICY,
  watchdogIdleMs: 10 * 60_000,
  watchdogIntervalMs: 60_000,
  probeTimeoutMs: 20_000,
  // Baileys asks the phone 2 s after the placeholder and forgets the ask 8 s later; a copy that
  // comes at all comes well within this.
  placeholderWaitMs: 60_000,
  quotaCheckIntervalMs: 60 * 60_000,
};

/** Real WhatsApp numbers through Baileys: one session, and one socket, per number. */
export class BaileysEngine extends declinedMetaCapabilities('baileys') implements Engine {
  readonly kind = BAILEYS_ENGINE.kind;
  readonly capabilities = BAILEYS_ENGINE.capabilities;
  readonly linker: SessionLinker = {
    link: async (number, lease) => {
      const session = await this.link(number, lease);
      return {
        onUpdate: (listener) => session.onLinkUpdate(listener),
        requestPairingCode: () => session.requestPairingCode(),
        stop: () => this.stop(number),
      };
    },
    logout: async (number) => {
      // Without a running session there is no socket to tell WhatsApp through: the operator
      // restarts it first (a failed session) or there is nothing linked to log out.
      const session = this.sessions.get(number.id);
      if (session === undefined)
        throw new AppError('invalid_argument', `${number.phone} has no running session to log out; restart or link it first.`);
      this.sessions.delete(number.id);
      await session.logout('logged out by the operator');
    },
  };
  readonly initialStatus: SessionStatus = BAILEYS_ENGINE.initialStatus;
  private readonly sessions = new Map<string, BaileysSession>();
  private readonly directory = new RecipientDirectory();
  private readonly pacer: SendPacer;
  private readonly timings: SessionTimings;

  constructor(private readonly options: BaileysEngineOptions) {
    super();
    this.pacer = new SendPacer(options.pacing);
    this.timings = { ...DEFAULT_TIMINGS, ...options.timings };
  }

  /**
   * Resumes a linked number's session. A number that was never linked waits for an operator to
   * link it: opening a socket for it would only show QR codes nobody scans.
   */
  async start(number: WhatsAppNumber, lease: SessionLease): Promise<void> {
    // Idempotent: the server calls this again periodically, to pick up numbers linked elsewhere
    // (by `wagw number link`). A session that exists, even one that gave up, is left alone.
    if (this.sessions.get(number.id)?.lease.epoch === lease.epoch) return;
    if (!(await isLinked(this.options.store, this.options.secretBox, number.id))) return;
    await this.link(number, lease);
  }

  /** Starts the number's session whether or not it was linked; an unlinked one shows QR codes. */
  async link(number: WhatsAppNumber, lease: SessionLease): Promise<BaileysSession> {
    // One socket per number: whatever ran before is ended first.
    await this.stop(number);
    const session = new BaileysSession({
      number,
      lease,
      socketFactory: this.options.socketFactory ?? createBaileysSocket,
      loadAuthState: () => createDatabaseAuthState(this.options.store, this.options.secretBox, lease, this.options.logger),
      loadProxy: () => this.proxyOf(number),
      events: this.options.events,
      logger: this.options.logger.child({ engine: 'baileys', phone: number.phone }),
      timings: this.timings,
      version: this.options.version,
    });
    this.sessions.set(number.id, session);
    await session.start();
    return session;
  }

  /** The number's proxy as stored now, opened; each connection reads it again, so a change applies to the next one. */
  private async proxyOf(number: WhatsAppNumber): Promise<ProxyUrl | undefined> {
    const sealed = await findSealedProxy(this.options.store.db, number.id);
    return sealed === null ? undefined : parseProxyUrl(this.options.secretBox.open(sealed));
  }

  async stop(number: WhatsAppNumber): Promise<void> {
    const session = this.sessions.get(number.id);
    this.sessions.delete(number.id);
    await session?.stop();
  }

  session(number: WhatsAppNumber): BaileysSession | undefined {
    return this.sessions.get(number.id);
  }

  sessionStatus(number: WhatsAppNumber): SessionStatus {
    return this.sessions.get(number.id)?.status ?? 'disconnected';
  }

  async sendPresence(number: WhatsAppNumber, toPhone: E164, state: ChatPresence): Promise<void> {
    const { socket } = this.connected(number);
    await socket.sendPresenceUpdate(state, toRecipientJid(toPhone));
  }

  async checkNumbers(number: WhatsAppNumber, phones: readonly E164[], admit: (lookups: number) => void): Promise<CheckedPhone[]> {
    const { session, socket } = this.connected(number);
    return this.directory.check(number.accountId, phones, lookupOn(socket, session.inbound), admit);
  }

  async createGroup(number: WhatsAppNumber, subject: string, participants: readonly E164[]): Promise<Group> {
    const { session, socket } = this.connected(number);
    const metadata = await socket.groupCreate(subject, participants.map(toRecipientJid));
    session.groups.put(metadata);
    return toGroup(metadata);
  }

  async listGroups(number: WhatsAppNumber): Promise<Group[]> {
    const { session, socket } = this.connected(number);
    const all = Object.values(await socket.groupFetchAllParticipating());
    for (const metadata of all) session.groups.put(metadata);
    return all.map(toGroup);
  }

  /**
   * From the session's cache, fetched once when missing. WhatsApp answers a group the number is
   * not in with an error (403 or 404), which means "not yours" here.
   */
  async groupInfo(number: WhatsAppNumber, groupId: string): Promise<Group | undefined> {
    const { session, socket } = this.connected(number);
    try {
      return toGroup(await session.groups.get(groupId, (jid) => socket.groupMetadata(jid)));
    } catch (error) {
      // Refused as not a member or not allowed to see it: for this number, no such group.
      const refusal = groupRefusal(error);
      if (refusal instanceof EngineSendError && refusal.failure !== 'rate_limited') return undefined;
      throw refusal;
    }
  }

  async updateParticipants(
    number: WhatsAppNumber,
    groupId: string,
    action: ParticipantAction,
    phones: readonly E164[],
  ): Promise<ParticipantResult[]> {
    const { session, socket } = this.connected(number);
    const answers = await socket
      .groupParticipantsUpdate(groupId, phones.map(toRecipientJid), action)
      .catch((error: unknown) => Promise.reject(groupRefusal(error)));
    session.groups.forget(groupId);
    return participantOutcomes(action, phones, answers);
  }

  async updateGroupSettings(number: WhatsAppNumber, groupId: string, settings: GroupSettings): Promise<void> {
    const { session, socket } = this.connected(number);
    try {
      if (settings.subject !== undefined) await socket.groupUpdateSubject(groupId, settings.subject);
      if (settings.description !== undefined) await socket.groupUpdateDescription(groupId, settings.description ?? undefined);
    } catch (error) {
      throw groupRefusal(error);
    } finally {
      session.groups.forget(groupId);
    }
  }

  async inviteCode(number: WhatsAppNumber, groupId: string, revoke: boolean): Promise<string> {
    const { socket } = this.connected(number);
    const code = await (revoke ? socket.groupRevokeInvite(groupId) : socket.groupInviteCode(groupId)).catch((error: unknown) =>
      Promise.reject(groupRefusal(error)),
    );
    if (code === undefined) throw new Error('WhatsApp answered without an invite code.');
    return code;
  }

  async leaveGroup(number: WhatsAppNumber, groupId: string): Promise<void> {
    const { session, socket } = this.connected(number);
    await socket.groupLeave(groupId).catch((error: unknown) => Promise.reject(groupRefusal(error)));
    session.groups.forget(groupId);
  }

  async subscribePresence(number: WhatsAppNumber, phone: E164): Promise<void> {
    const { session, socket } = this.connected(number);
    await session.subscribePresence(socket, toRecipientJid(phone));
  }

  /** Sent now, and kept by the session so that its next sockets connect showing the same. */
  async setOnline(number: WhatsAppNumber, online: boolean): Promise<void> {
    const session = this.sessions.get(number.id);
    if (session !== undefined) session.showOnline = online;
    const { socket } = this.connected(number);
    await socket.sendPresenceUpdate(online ? 'available' : 'unavailable');
  }

  /** Three queries at once; what the contact hides from us (401) or does not have (404) is null. */
  async contactProfile(number: WhatsAppNumber, phone: E164): Promise<ContactProfile> {
    const { session, socket } = this.connected(number);
    const jid = toRecipientJid(phone);
    const [pictureUrl, status, business] = await Promise.all([
      socket.profilePictureUrl(jid, 'image').catch(hiddenOrNone),
      socket.fetchStatus(jid).catch(hiddenOrNone),
      socket.getBusinessProfile(jid).then((profile) => profile ?? undefined, hiddenOrNone),
    ]);
    const { about, setAt } = aboutOf(status);
    return {
      about,
      aboutSetAt: setAt,
      picture: pictureUrl ? pictureAt(pictureUrl, session.fetchDispatcher) : null,
      business: businessOf(business),
    };
  }

  async updateProfile(number: WhatsAppNumber, changes: ProfileChanges, picture?: OutgoingMedia): Promise<void> {
    const { socket } = this.connected(number);
    if (changes.name !== undefined) await socket.updateProfileName(changes.name);
    if (changes.about !== undefined) await socket.updateProfileStatus(changes.about);
    if (picture !== undefined) await socket.updateProfilePicture(toRecipientJid(number.phone), await picture.read());
  }

  async updateBlock(number: WhatsAppNumber, phone: E164, blocked: boolean): Promise<void> {
    const { socket } = this.connected(number);
    await socket.updateBlockStatus(toRecipientJid(phone), blocked ? 'block' : 'unblock');
  }

  /** WhatsApp names blocked contacts by phone JID or by LID; a LID's phone comes from Baileys' mapping where it knows it. */
  async blocklist(number: WhatsAppNumber): Promise<Contact[]> {
    const { session, socket } = this.connected(number);
    const contacts: Contact[] = [];
    for (const jid of await socket.fetchBlocklist()) {
      const contact = memberOf(jid, undefined);
      if (contact === null) continue;
      contacts.push(contact.phone === null ? { ...contact, phone: await session.inbound.phoneOfLid(contact.lid) } : contact);
    }
    return contacts;
  }

  async rejectCall(number: WhatsAppNumber, call: CallRef): Promise<void> {
    const { session, socket } = this.connected(number);
    session.inbound.noteRejectedCall(call.callId);
    await socket.rejectCall(call.callId, call.caller);
  }

  /**
   * WhatsApp's answer to the capping query, as it gave it. The query fails for some accounts (a
   * 500 from WhatsApp's GraphQL endpoint): that is an answer too, `unknown` with the error, since
   * the number sends on regardless and the governor's own cap stands in (ADR 0058).
   */
  async newChatQuota(number: WhatsAppNumber): Promise<NewChatQuota> {
    const { session } = this.connected(number);
    // Read through the session, which reports it: what the API was told, the governor knows too.
    return (await session.readQuota()) ?? failedCapRead(new Error('the session closed'));
  }

  async downloadAgain(number: WhatsAppNumber, retryToken: string): Promise<AsyncIterable<Buffer>> {
    const session = this.sessions.get(number.id);
    if (session === undefined) throw new Error(`${number.phone} has no WhatsApp session on this node.`);
    return session.inbound.download(messageOfRetryToken(retryToken));
  }

  async sendMessage(number: WhatsAppNumber, request: OutgoingMessage): Promise<SentMessage> {
    declineUncarried(this.kind, this.capabilities.uncarried, request.structured);
    const { session, socket } = this.connected(number);
    // A person goes to the JID WhatsApp named for the phone, which may be its other form (ADR 0050).
    const toPhone = isGroupMessage(request) ? undefined : request.toPhone;
    const recipient =
      toPhone === undefined ? undefined : await this.directory.recipient(number.accountId, toPhone, lookupOn(socket, session.inbound));
    if (recipient?.exists === false) throw new EngineSendError('recipient_not_on_whatsapp', `${toPhone} does not use WhatsApp.`);
    await this.pacer.waitTurn(number.id);
    const { content, pollSecret } = await contentOf(request);
    const options = request.replyTo === undefined ? undefined : { quoted: toQuoted(request.replyTo) };
    const withSecret = (sent: SentMessage): SentMessage =>
      pollSecret === undefined ? sent : { ...sent, pollSecret: pollSecret.toString('base64') };
    if (!isGroupMessage(request))
      return withSecret(await this.sendOn(session, socket, recipient?.waId ?? toRecipientJid(request.toPhone), content, options));
    // Baileys reads the group's members from the session's cache (cachedGroupMetadata), as the
    // mentions do here: a send to a known group asks WhatsApp nothing.
    const mentions =
      request.mentions.length === 0 ? {} : { mentions: mentionJids(session.groups.cached(request.toGroup), request.mentions) };
    return withSecret(await this.sendOn(session, socket, request.toGroup, { ...content, ...mentions } as AnyMessageContent, options));
  }

  async sendAction(number: WhatsAppNumber, target: MessageRef, action: MessageAction): Promise<SentMessage> {
    const { session, socket } = this.connected(number);
    await this.pacer.waitTurn(number.id);
    return this.sendOn(session, socket, target.groupId ?? toRecipientJid(target.chatPhone), toActionContent(target, action));
  }

  async modifyChat(number: WhatsAppNumber, chat: ChatTarget, change: ChatChange): Promise<void> {
    const { socket } = this.connected(number);
    await socket.chatModify(toChatModification(chat, change), toChatJid(chat.chatId));
  }

  async markRead(number: WhatsAppNumber, targets: readonly MessageRef[]): Promise<void> {
    const { socket } = this.connected(number);
    await socket.readMessages(targets.map(toMessageKey));
  }

  private connected(number: WhatsAppNumber) {
    const session = this.sessions.get(number.id);
    const socket = session?.socketForSending;
    if (session === undefined || socket === undefined) {
      throw new EngineSendError('not_connected', `${number.phone} is not connected to WhatsApp.`, session?.status ?? 'disconnected');
    }
    return { session, socket };
  }

  private async sendOn(
    session: BaileysSession,
    socket: NonNullable<BaileysSession['socketForSending']>,
    jid: string,
    content: AnyMessageContent,
    options?: MiscMessageGenerationOptions,
  ): Promise<SentMessage> {
    try {
      const sent = await socket.sendMessage(jid, content, options);
      const id = sent?.key?.id;
      if (id === undefined || id === null) throw new Error('WhatsApp accepted the message without an id.');
      if (sent?.message) session.sentMessages.remember(id, sent.message);
      session.markTraffic();
      return { engineMessageId: id, lease: session.lease };
    } catch (error) {
      const statusCode = (error as { output?: { statusCode?: number } }).output?.statusCode;
      // WhatsApp answers 463 when it has restricted the account; retrying only deepens the
      // trouble, so the number is paused (its session stays up: receiving still works).
      if (String(statusCode) === ACCOUNT_RESTRICTED_CODE) {
        await session.restricted('restricted', null, 'WhatsApp refused a send with 463 (account restricted)');
        throw new EngineSendError('restricted', 'WhatsApp restricted this account (463).');
      }
      // A send WhatsApp refuses for the new-chat cap holds the number's first contacts (ADR 0058).
      if (String(statusCode) === NEW_CHAT_CAPPED_CODE) await session.capMet(`WhatsApp refused a send to ${jid} with 475 (new-chat cap)`);
      const refusal = groupRefusal(error);
      if (refusal instanceof EngineSendError && refusal.failure === 'rate_limited') {
        await session.restricted(
          'rate_limited',
          new Date(Date.now() + RATE_LIMIT_PAUSE_MS),
          'WhatsApp answered a send with rate-overlimit',
        );
        throw refusal;
      }
      // WhatsApp refuses a group send from a number that is not (or no longer) a member.
      if (isJidGroup(jid) && refusal instanceof EngineSendError) {
        session.groups.forget(jid);
        throw new EngineSendError('not_group_member', `${session.lease.numberId} is not a member of ${jid}.`);
      }
      throw error;
    }
  }
}
