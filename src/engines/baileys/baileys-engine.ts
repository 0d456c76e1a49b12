import type { Logger } from 'pino';
import type { SessionLease, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import type { Store } from '../../store/database.ts';
import type { SecretBox } from '../../secrets/secret-box.ts';
import { messageOfRetryToken } from './media-retry-token.ts';
import { mentionJids, toGroup } from './group-mapper.ts';
import type { Group, GroupSettings, ParticipantAction, ParticipantResult } from '../../domain/groups.ts';
import { groupRefusal, participantOutcomes } from './group-admin.ts';
import { EngineSendError, isGroupMessage, type ChatPresence, type Engine, type EngineEvents, type MessageAction, type MessageRef, type OutgoingMessage, type SentMessage, type SessionLinker } from '../engine.ts';
import { createDatabaseAuthState, isLinked } from './auth-state-store.ts';
import { BaileysSession, type SessionTimings } from './baileys-session.ts';
import { toActionContent, toMediaContent, toMessageKey, toQuoted, toRecipientJid, toTextContent } from './outbound-mapper.ts';
import { isJidGroup, type AnyMessageContent, type MiscMessageGenerationOptions } from 'baileys';
import { RecipientDirectory, type CheckedPhone, type LookupMany, type RecipientAnswer } from '../recipient-directory.ts';
import { SendPacer, type PacingOptions } from './send-pacer.ts';
import { createBaileysSocket, type SocketFactory } from './session-socket.ts';
import { DEFAULT_RECONNECT_POLICY } from './reconnect-policy.ts';
import { BAILEYS_ENGINE } from './descriptor.ts';

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
};

// WhatsApp answers 463 when it has restricted the account; retrying only deepens the trouble.
const ACCOUNT_RESTRICTED = 463;

/** Real WhatsApp numbers through Baileys: one session, and one socket, per number. */
export class BaileysEngine implements Engine {
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
  };
  readonly initialStatus: SessionStatus = BAILEYS_ENGINE.initialStatus;
  private readonly sessions = new Map<string, BaileysSession>();
  private readonly directory = new RecipientDirectory();
  private readonly pacer: SendPacer;
  private readonly timings: SessionTimings;

  constructor(private readonly options: BaileysEngineOptions) {
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
      events: this.options.events,
      logger: this.options.logger.child({ engine: 'baileys', phone: number.phone }),
      timings: this.timings,
      version: this.options.version,
    });
    this.sessions.set(number.id, session);
    await session.start();
    return session;
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
    const { socket } = this.connected(number);
    return this.directory.check(number.accountId, phones, lookupOn(socket), admit);
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

  async updateParticipants(number: WhatsAppNumber, groupId: string, action: ParticipantAction, phones: readonly E164[]): Promise<ParticipantResult[]> {
    const { session, socket } = this.connected(number);
    const answers = await socket.groupParticipantsUpdate(groupId, phones.map(toRecipientJid), action).catch((error: unknown) => Promise.reject(groupRefusal(error)));
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
    const code = await (revoke ? socket.groupRevokeInvite(groupId) : socket.groupInviteCode(groupId)).catch((error: unknown) => Promise.reject(groupRefusal(error)));
    if (code === undefined) throw new Error('WhatsApp answered without an invite code.');
    return code;
  }

  async leaveGroup(number: WhatsAppNumber, groupId: string): Promise<void> {
    const { session, socket } = this.connected(number);
    await socket.groupLeave(groupId).catch((error: unknown) => Promise.reject(groupRefusal(error)));
    session.groups.forget(groupId);
  }

  async downloadAgain(number: WhatsAppNumber, retryToken: string): Promise<AsyncIterable<Buffer>> {
    const session = this.sessions.get(number.id);
    if (session === undefined) throw new Error(`${number.phone} has no WhatsApp session on this node.`);
    return session.download(messageOfRetryToken(retryToken));
  }

  async sendMessage(number: WhatsAppNumber, request: OutgoingMessage): Promise<SentMessage> {
    const { session, socket } = this.connected(number);
    if (!isGroupMessage(request) && !(await this.directory.isOnWhatsApp(number.accountId, request.toPhone, lookupOn(socket)))) {
      throw new EngineSendError('recipient_not_on_whatsapp', `${request.toPhone} does not use WhatsApp.`);
    }
    await this.pacer.waitTurn(number.id);
    const media = request.media;
    const content = media === undefined ? toTextContent(request.text) : toMediaContent({ ...media, bytes: { stream: await media.open() } }, request.text);
    const options = request.replyTo === undefined ? undefined : { quoted: toQuoted(request.replyTo) };
    if (!isGroupMessage(request)) return this.sendOn(session, socket, toRecipientJid(request.toPhone), content, options);
    // Baileys reads the group's members from the session's cache (cachedGroupMetadata), as the
    // mentions do here: a send to a known group asks WhatsApp nothing.
    const mentions = request.mentions.length === 0 ? {} : { mentions: mentionJids(session.groups.cached(request.toGroup), request.mentions) };
    return this.sendOn(session, socket, request.toGroup, { ...content, ...mentions } as AnyMessageContent, options);
  }

  async sendAction(number: WhatsAppNumber, target: MessageRef, action: MessageAction): Promise<SentMessage> {
    const { session, socket } = this.connected(number);
    await this.pacer.waitTurn(number.id);
    return this.sendOn(session, socket, target.groupId ?? toRecipientJid(target.chatPhone), toActionContent(target, action));
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

  private async sendOn(session: BaileysSession, socket: NonNullable<BaileysSession['socketForSending']>, jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<SentMessage> {
    try {
      const sent = await socket.sendMessage(jid, content, options);
      const id = sent?.key?.id;
      if (id === undefined || id === null) throw new Error('WhatsApp accepted the message without an id.');
      if (sent?.message) session.sentMessages.remember(id, sent.message);
      session.markTraffic();
      return { engineMessageId: id, lease: session.lease };
    } catch (error) {
      const statusCode = (error as { output?: { statusCode?: number } }).output?.statusCode;
      if (statusCode === ACCOUNT_RESTRICTED) {
        await session.report('failed', 'WhatsApp restricted this account (463); sends are paused until it is lifted');
        throw new EngineSendError('rejected', 'WhatsApp restricted this account (463).', 'failed');
      }
      const refusal = groupRefusal(error);
      if (refusal instanceof EngineSendError && refusal.failure === 'rate_limited') throw refusal;
      // WhatsApp refuses a group send from a number that is not (or no longer) a member.
      if (isJidGroup(jid) && refusal instanceof EngineSendError) {
        session.groups.forget(jid);
        throw new EngineSendError('not_group_member', `${session.lease.numberId} is not a member of ${jid}.`);
      }
      throw error;
    }
  }
}

/** One onWhatsApp query for many phones; WhatsApp answers by JID, whose user part is the phone's digits. */
function lookupOn(socket: { onWhatsApp(...phoneNumbers: string[]): Promise<Array<{ jid: string; exists: boolean }> | undefined> }): LookupMany {
  return async (phones) => {
    const answers = new Map<E164, RecipientAnswer>();
    const byDigits = new Map(phones.map((phone) => [phone.slice(1), phone]));
    for (const answer of (await socket.onWhatsApp(...byDigits.keys())) ?? []) {
      const phone = byDigits.get(answer.jid.split('@')[0]!.split(':')[0]!);
      if (phone !== undefined) answers.set(phone, { exists: answer.exists === true, waId: answer.exists === true ? answer.jid : null });
    }
    return answers;
  };
}
