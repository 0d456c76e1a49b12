import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Message, SessionLease, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import {
  type ChatChange,
  type ChatPresence,
  type ChatTarget,
  type Engine,
  type EngineCapabilities,
  type NewChatQuota,
  type IncomingMedia,
  MediaGoneError,
  type MessageAction,
  type MessageRef,
  type OutgoingMedia,
  type OutgoingMessage,
  type SentMessage,
  type CallRef,
  type ContactProfile,
  type SessionLinker,
} from '../engine.ts';
import type { EngineEvents } from '../engine-events.ts';
import { sandboxRegisteredForm } from './sandbox-registrations.ts';
import { SandboxPhoneBook } from './sandbox-phone-book.ts';
import { heardFromNetwork } from './sandbox-inbound.ts';
import { networkMedia, SandboxSimulator, type SimulatedSessions } from './sandbox-simulator.ts';
import { LINK_ENDED_REASON, SandboxLinker } from './sandbox-linker.ts';
import type { MediaKind } from '../../domain/media.ts';
import type { ProfileChanges } from '../../domain/profiles.ts';
import type { Group, GroupMember as Contact, GroupSettings, ParticipantAction, ParticipantResult } from '../../domain/groups.ts';
import { declineUncarried } from '../capability-declined.ts';
import type { MessageTemplate } from '../../domain/templates.ts';
import { renderTemplateSend, SEEDED_TEMPLATES } from './sandbox-templates.ts';
import { GroupRefusedError, type GroupOperation } from './sandbox-groups.ts';
import { EngineSendError, isGroupMessage } from '../engine.ts';
import { RecipientDirectory, type CheckedPhone } from '../recipient-directory.ts';
import {
  NetworkUnreachableError,
  NotConnectedError,
  NotGroupMemberError,
  SendRestrictedError,
  type NetworkRestriction,
  type NetworkConnection,
  type NetworkMedia,
  type SandboxNetworkPort,
} from './sandbox-network.ts';

export interface SandboxEngineOptions {
  events: EngineEvents;
  /** The simulated network: in this process by default, or shared by every node of a cluster. */
  network: SandboxNetworkPort;
  /** This node's id, which the network records with every connection. */
  nodeId: string;
  /** Reads back an incoming message the network delivered, once stored, by its network id. */
  findReceived(numberId: string, engineMessageId: string): Promise<Message | undefined>;
  /** The phones of every sandbox number of the gateway, connected or not. */
  listSandboxPhones(): Promise<string[]>;
  /** Hears the events the gateway could not record (the network delivers them once, and does not wait). */
  logger?: Logger;
  /** How often a linking attempt offers a new QR (20 s, as WhatsApp); tests shorten it. */
  linkQrRotateMs?: number;
}

/** How soon a session whose way to a shared network broke tries to connect again; each failure doubles the pause, up to the most. */
const RECONNECT_MS = 250;
const RECONNECT_MAX_MS = 2_000;
/** Why a sandbox number is in conflict when another connection took its place; see `start`. */
const REPLACED_REASON = 'another connection of this number replaced this one';
/** Late files held for their retries at most; the oldest go first, and their retries give up. */
const MAX_LATE_FILES = 1_000;
/** Chats whose last presence is kept for a look; the oldest are forgotten first. */
const MAX_PRESENCES_KEPT = 1_000;

interface SandboxSession {
  lease: SessionLease;
  connection: NetworkConnection | undefined;
  /** Set when another connection of the number replaced this one. */
  replaced: boolean;
  /** Set while the session's one reconnect loop runs. */
  reconnecting: boolean;
  /** Set while a rehearsed quiet session lasts: it looks open, and hears nothing (POST /sandbox/restrict, quiet_session). */
  quiet?: NodeJS.Timeout;
}

/**
 * The embedded default engine: numbers on the simulated WhatsApp network (sandbox-network.ts).
 *
 * A sandbox number has a session like a real one: the node that owns the number connects it to
 * the network, and a second connection elsewhere replaces the first, as WhatsApp does. Its
 * stored status is what the operator sets to rehearse an outage, so a live session is as
 * connected as that status says; without a live session it is disconnected.
 */
export class SandboxEngine implements Engine, SimulatedSessions {
  readonly kind = 'sandbox' as const;
  readonly capabilities: EngineCapabilities = {
    simulatedInbound: true,
    simulatedSessionStatus: true,
    linking: false,
    staggeredStart: false,
    // Templates and interactive messages are rehearsed as the Cloud API carries them (docs/cloud-api.md#rehearse-in-the-sandbox).
    uncarried: [],
  };
  readonly initialStatus: SessionStatus = 'connected';
  /** The other side of the engine's numbers: simulated phones and the network's rehearsals. */
  readonly simulator: SandboxSimulator;
  private readonly sessions = new Map<string, SandboxSession>();
  /** Files sent to fail their first downloads, by retry token, oldest first. */
  private readonly lateFiles = new Map<string, { base64: string; failuresLeft: number }>();
  private readonly directory = new RecipientDirectory();
  /** Which recipients are the gateway's own sandbox numbers, told to the network before they connect. */
  private readonly phoneBook: SandboxPhoneBook;
  /** Each sandbox number's own profile, by phone. */
  private readonly profiles = new Map<
    string,
    { name?: string; about?: string; aboutSetAt?: Date; picture?: { version: string; bytes: Buffer } }
  >();
  /** Linking rehearsed as WhatsApp does it (a rotating QR, a pairing code); see sandbox-linker.ts. */
  private readonly linking: SandboxLinker;
  readonly linker: SessionLinker;

  constructor(private readonly options: SandboxEngineOptions) {
    this.phoneBook = new SandboxPhoneBook(options);
    this.simulator = new SandboxSimulator({
      events: options.events,
      network: options.network,
      findReceived: options.findReceived,
      sessions: this,
    });
    this.linking = new SandboxLinker({
      connect: async (number, lease) => {
        await this.start(number, lease);
        await this.options.events.sessionStatusChanged({ lease, phone: number.phone, status: 'connected', reason: 'linked' });
      },
      disconnect: (number) => this.stop(number),
      report: (number, lease, status, reason) => this.options.events.sessionStatusChanged({ lease, phone: number.phone, status, reason }),
      ...(options.linkQrRotateMs !== undefined && { qrRotateMs: options.linkQrRotateMs }),
    });
    this.linker = {
      link: (number, lease) => this.linking.link(number, lease),
      logout: async (number, lease) => {
        this.linking.forget(number.id);
        await this.stop(number);
        await this.options.events.sessionStatusChanged({
          lease,
          phone: number.phone,
          status: 'logged_out',
          reason: 'logged out by the operator',
        });
      },
    };
  }

  /** The simulated phone scans the number's current QR, or types its pairing code: whether that linked it. */
  confirmLink(number: WhatsAppNumber, code: string): Promise<boolean> {
    return this.linking.confirm(number, code);
  }

  async start(number: WhatsAppNumber, lease: SessionLease): Promise<void> {
    // A number being linked stays off the network until its phone scans, whatever starts it.
    if (this.linking.linking(number.id)) return;
    const existing = this.sessions.get(number.id);
    if (existing !== undefined && existing.lease.epoch === lease.epoch && !existing.replaced) return;
    await this.stop(number);
    const session: SandboxSession = { lease, connection: undefined, replaced: false, reconnecting: false };
    this.sessions.set(number.id, session);
    await this.connect(number, session);
    // The conflict was this engine's report of a replacement, and the disconnection the end of a
    // linking attempt without a scan, not statuses the operator set: a session that holds the
    // number again (after `wagw number restart`, say) ends them.
    if (
      (number.status === 'conflict' && number.statusReason === REPLACED_REASON) ||
      (number.status === 'disconnected' && number.statusReason === LINK_ENDED_REASON)
    ) {
      await this.options.events.sessionStatusChanged({ lease, phone: number.phone, status: 'connected', reason: 'connected again' });
    }
  }

  private async connect(number: WhatsAppNumber, session: SandboxSession): Promise<void> {
    const { events } = this.options;
    const { lease } = session;
    session.connection = await this.options.network.connect(number.phone, this.options.nodeId, {
      incoming: async (message) => {
        // A quiet session stores nothing: the network keeps the message until the session is restarted.
        if (session.quiet !== undefined) return new Promise<void>(() => undefined);
        await heardFromNetwork(events, number, message, (media, kind) => this.incomingMedia(number, message.id, media, kind));
      },
      groupChanged: (change) => {
        void events
          .groupChanged({ ...change, toPhone: number.phone })
          .catch((error: unknown) => this.unrecorded(error, number, 'a group change'));
      },
      // Answered to the network, which keeps a receipt not recorded and hands it over again (ADR 0062).
      receipt: (receipt) =>
        session.quiet !== undefined
          ? new Promise<void>(() => undefined)
          : events.receipt({
              lease,
              phone: number.phone,
              engineMessageId: receipt.id,
              status: receipt.status,
              errorCode: null,
              at: new Date(),
            }),
      replaced: () => {
        session.replaced = true;
        void events
          .sessionStatusChanged({ lease, phone: number.phone, status: 'conflict', reason: REPLACED_REASON })
          .catch((error: unknown) => this.unrecorded(error, number, 'a replaced session'));
      },
      lost: () => {
        session.connection = undefined;
        this.reconnect(number, session);
      },
      restricted: (restriction) => {
        void this.reportRestriction(number, lease, restriction).catch((error: unknown) => this.unrecorded(error, number, 'a restriction'));
      },
    });
  }

  /** An event the network delivered once that the gateway could not record: logged, as the network will not repeat it. */
  unrecorded(error: unknown, number: WhatsAppNumber, what: string): void {
    this.options.logger?.warn({ err: error, phone: number.phone }, `could not record ${what} from the sandbox network`);
  }

  /**
   * Connects a session whose way to the shared network broke, again and again with a growing
   * pause until it holds, in one loop per session: a loss heard while the loop runs joins it,
   * rather than starting a second one whose connection would replace the first's.
   */
  private reconnect(number: WhatsAppNumber, session: SandboxSession): void {
    if (session.reconnecting) return;
    session.reconnecting = true;
    const attempt = (delayMs: number) => {
      setTimeout(() => {
        if (this.sessions.get(number.id) !== session || session.connection !== undefined) {
          session.reconnecting = false;
          return;
        }
        this.connect(number, session).then(
          () => {
            session.reconnecting = false;
            // Stopped while it was connecting: the connection it made must not outlive it.
            if (this.sessions.get(number.id) !== session) void session.connection?.close();
          },
          () => attempt(Math.min(delayMs * 2, RECONNECT_MAX_MS)),
        );
      }, delayMs).unref();
    };
    attempt(RECONNECT_MS);
  }

  async stop(number: WhatsAppNumber): Promise<void> {
    const session = this.sessions.get(number.id);
    if (session === undefined) return;
    this.sessions.delete(number.id);
    clearTimeout(session.quiet);
    await session.connection?.close();
  }

  sessionStatus(number: WhatsAppNumber): SessionStatus {
    const session = this.sessions.get(number.id);
    if (session === undefined || session.connection === undefined) return 'disconnected';
    return session.replaced ? 'conflict' : number.status;
  }

  async sendMessage(number: WhatsAppNumber, request: OutgoingMessage): Promise<SentMessage> {
    declineUncarried(this.kind, this.capabilities.uncarried, request.structured);
    const { media, replyTo, structured } = request;
    // A template is checked as the Cloud API engine checks it, and the recipient reads it filled in.
    const text =
      structured !== undefined && 'template' in structured
        ? renderTemplateSend(await this.listTemplates(number), structured.template, media?.kind)
        : request.text;
    // As WhatsApp does, a phone written in its other form reaches the account under its own.
    const to = isGroupMessage(request) ? request.toGroup : sandboxRegisteredForm(request.toPhone);
    if (!isGroupMessage(request)) await this.phoneBook.announce(sandboxRegisteredForm(request.toPhone));
    const extras = {
      ...(replyTo !== undefined && { quoted: replyTo.engineMessageId }),
      ...(isGroupMessage(request) && { mentions: [...request.mentions] }),
      ...(request.structured !== undefined && { structured: request.structured }),
    };
    return this.onConnection(number, (connection) =>
      connection.send(to, text, media === undefined ? undefined : () => networkMedia(media), extras),
    );
  }

  /**
   * A sandbox number's rehearsal templates: the seeded ones, then those the account added or
   * replaced (POST /sandbox/templates), which this node keeps while it runs, as a simulator does.
   */
  async listTemplates(number: WhatsAppNumber): Promise<MessageTemplate[]> {
    this.assertConnected(number);
    const added = this.simulator.templates.get(number.id) ?? [];
    const replaced = (template: MessageTemplate) =>
      added.some((each) => each.name === template.name && each.language === template.language);
    return [...SEEDED_TEMPLATES.filter((template) => !replaced(template)), ...added];
  }

  /** A reaction, edit or revocation travels as a message of its own that names its target. */
  async sendAction(number: WhatsAppNumber, target: MessageRef, action: MessageAction): Promise<SentMessage> {
    const text = action.kind === 'edit' ? action.text : '';
    const carried = { kind: action.kind, target: target.engineMessageId, ...(action.kind === 'react' && { emoji: action.emoji }) };
    if (target.groupId === undefined) await this.phoneBook.announce(target.chatPhone);
    return this.onConnection(number, (connection) =>
      connection.send(target.groupId ?? target.chatPhone, text, undefined, { action: carried }),
    );
  }

  /**
   * A chat's state lives on the number's own devices, and the simulated network has no other
   * device of ours to tell: the gateway's record is the whole of it. A session must be up, as
   * on WhatsApp.
   */
  async modifyChat(number: WhatsAppNumber, _chat: ChatTarget, _change: ChatChange): Promise<void> {
    await this.onConnection(number, async () => ({ id: '' }));
  }

  async markRead(number: WhatsAppNumber, targets: readonly MessageRef[]): Promise<void> {
    const first = targets[0];
    if (first === undefined) return;
    await this.onConnection(number, async (connection) => {
      // In a group, the receipt goes to the member who wrote the message.
      await connection.markRead(
        first.groupId === undefined ? first.chatPhone : (first.participant ?? first.chatPhone),
        targets.map((target) => target.engineMessageId),
      );
      return { id: '' };
    });
  }

  /** Runs `use` on the number's live connection, or refuses as WhatsApp does when there is none. */
  private async onConnection(
    number: WhatsAppNumber,
    use: (connection: NetworkConnection) => Promise<{ id: string }>,
  ): Promise<SentMessage> {
    const status = this.sessionStatus(number);
    const session = this.sessions.get(number.id);
    if (status !== 'connected' || session?.connection === undefined) {
      throw new EngineSendError('not_connected', `The sandbox session of ${number.phone} is ${status}.`, status);
    }
    try {
      const sent = await use(session.connection);
      return { engineMessageId: sent.id, lease: session.lease };
    } catch (error) {
      if (error instanceof NotConnectedError) throw new EngineSendError('not_connected', error.message, 'disconnected');
      // Only a send that surely never reached the network is refused: one that may have is not known to have failed.
      if (error instanceof NetworkUnreachableError && !error.delivered)
        throw new EngineSendError('not_connected', error.message, 'disconnected');
      if (error instanceof NotGroupMemberError) throw new EngineSendError('not_group_member', error.message);
      if (error instanceof SendRestrictedError && error.restriction.kind === 'new_chat_cap')
        return this.capMet(number, session.lease, error.restriction);
      if (error instanceof SendRestrictedError) {
        await this.reportRestriction(number, session.lease, error.restriction);
        throw new EngineSendError(error.restriction.kind === 'restricted' ? 'restricted' : 'rate_limited', error.message);
      }
      throw error;
    }
  }

  /**
   * The network refused a first contact past the rehearsed cap: as on WhatsApp, whose 475 comes
   * in the send's ack, the send is taken (an id), and a failed receipt with 475 follows, after
   * the cap is reported with the quota. The message never reaches the recipient.
   */
  private async capMet(number: WhatsAppNumber, lease: SessionLease, restriction: NetworkRestriction): Promise<SentMessage> {
    const engineMessageId = `sbx_capped_${randomBytes(8).toString('hex')}`;
    const quota: NewChatQuota = {
      status: 'capped',
      total: restriction.newChats ?? 0,
      used: restriction.used ?? restriction.newChats ?? 0,
      cycleStartedAt: null,
      cycleEndsAt: new Date(restriction.until),
      error: null,
    };
    this.simulator.quotas.set(number.id, quota);
    const { events } = this.options;
    setImmediate(() => {
      void (async () => {
        const detail = 'the sandbox network refused a new chat with 475, as asked';
        await events.newChatQuota({ lease, phone: number.phone, at: new Date(), kind: 'capped', detail, quota });
        await events.receipt({ lease, phone: number.phone, engineMessageId, status: 'failed', errorCode: '475', at: new Date() });
      })().catch((error: unknown) => this.unrecorded(error, number, 'a 475'));
    });
    return { engineMessageId, lease };
  }

  /** The network's restriction as WhatsApp's would be reported: a 463, or a rate limit for the network's window. */
  private reportRestriction(number: WhatsAppNumber, lease: SessionLease, restriction: NetworkRestriction): Promise<void> {
    const restricted = restriction.kind === 'restricted';
    return this.options.events.numberRestricted({
      lease,
      phone: number.phone,
      reason: restricted ? 'restricted' : 'rate_limited',
      until: new Date(restriction.until),
      detail: restricted
        ? 'the sandbox network restricted this number (463), as asked'
        : 'the sandbox network answered a send with rate-overlimit, as asked',
    });
  }

  /**
   * The network carried the bytes with the message, so the download is immediate, unless the
   * file was sent to fail its first downloads. Such a file waits here for its retries, while
   * this process runs (a simulator keeps no files on disk); after a restart it is gone.
   */
  private incomingMedia(number: WhatsAppNumber, messageId: string, media: NetworkMedia, kind: MediaKind): IncomingMedia {
    const described = { kind, mimeType: media.mimeType, fileName: media.fileName };
    if (!media.failedDownloads)
      return { ...described, retryToken: null, download: async () => Readable.from([Buffer.from(media.base64, 'base64')]) };
    const retryToken = `${number.id}/${messageId}`;
    this.lateFiles.set(retryToken, { base64: media.base64, failuresLeft: media.failedDownloads });
    while (this.lateFiles.size > MAX_LATE_FILES) this.lateFiles.delete(this.lateFiles.keys().next().value!);
    return { ...described, retryToken, download: () => this.downloadAgain(number, retryToken) };
  }

  /**
   * The simulated phones show nobody what we are doing, so typing is accepted from a connected
   * session and otherwise refused as on WhatsApp; the last state of each chat is kept for a look.
   */
  async sendPresence(number: WhatsAppNumber, toPhone: E164, state: ChatPresence): Promise<void> {
    this.assertConnected(number);
    this.simulator.presences.set(`${number.phone}>${toPhone}`, state);
    while (this.simulator.presences.size > MAX_PRESENCES_KEPT)
      this.simulator.presences.delete(this.simulator.presences.keys().next().value!);
  }

  /** Groups live on the simulated network, which any connected sandbox number may ask. */
  async createGroup(number: WhatsAppNumber, subject: string, participants: readonly E164[]): Promise<Group> {
    this.assertConnected(number);
    // Sandbox numbers added to the group get its messages even before their first connection.
    for (const phone of participants) await this.phoneBook.announce(phone);
    return this.options.network.createGroup(number.phone, subject, participants);
  }

  async listGroups(number: WhatsAppNumber): Promise<Group[]> {
    this.assertConnected(number);
    return this.options.network.groupsOf(number.phone);
  }

  async updateParticipants(
    number: WhatsAppNumber,
    groupId: string,
    action: ParticipantAction,
    phones: readonly E164[],
  ): Promise<ParticipantResult[]> {
    if (action === 'add') for (const phone of phones) await this.phoneBook.announce(phone);
    return (await this.manage(number, groupId, { kind: 'participants', action, phones: [...phones] })).results ?? [];
  }

  async updateGroupSettings(number: WhatsAppNumber, groupId: string, settings: GroupSettings): Promise<void> {
    await this.manage(number, groupId, { kind: 'settings', settings });
  }

  async inviteCode(number: WhatsAppNumber, groupId: string, revoke: boolean): Promise<string> {
    return (await this.manage(number, groupId, { kind: 'invite', revoke })).code!;
  }

  async leaveGroup(number: WhatsAppNumber, groupId: string): Promise<void> {
    await this.manage(number, groupId, { kind: 'leave' });
  }

  /** The network refuses a change by a non-member or non-admin as WhatsApp does; the port says which. */
  private async manage(
    number: WhatsAppNumber,
    groupId: string,
    operation: GroupOperation,
  ): Promise<{ results?: ParticipantResult[]; code?: string }> {
    this.assertConnected(number);
    try {
      return await this.options.network.manageGroup(number.phone, groupId, operation);
    } catch (error) {
      if (error instanceof GroupRefusedError)
        throw new EngineSendError(error.reason === 'not_admin' ? 'not_group_admin' : 'not_group_member', error.message);
      throw error;
    }
  }

  async groupInfo(number: WhatsAppNumber, groupId: string): Promise<Group | undefined> {
    this.assertConnected(number);
    return this.options.network.groupSeenBy(number.phone, groupId);
  }

  assertConnected(number: WhatsAppNumber): void {
    const status = this.sessionStatus(number);
    if (status !== 'connected') throw new EngineSendError('not_connected', `The sandbox session of ${number.phone} is ${status}.`, status);
  }

  /**
   * The simulated network reaches every phone (a send to any valid phone is delivered), so every
   * phone uses WhatsApp here; answers are remembered and lookups counted as for a real number,
   * so that an integration meets the cache and the lookup limit in the sandbox too.
   */
  async checkNumbers(number: WhatsAppNumber, phones: readonly E164[], admit: (lookups: number) => void): Promise<CheckedPhone[]> {
    this.assertConnected(number);
    return this.directory.check(
      number.accountId,
      phones,
      async (unknown) =>
        new Map(unknown.map((phone) => [phone, { exists: true, waId: `${sandboxRegisteredForm(phone).slice(1)}@s.whatsapp.net` }])),
      admit,
    );
  }

  /**
   * Simulated phones are always online: a subscription hears the contact available at once,
   * after the answer, as WhatsApp's first presence report follows a subscription.
   */
  async subscribePresence(number: WhatsAppNumber, phone: E164): Promise<void> {
    this.assertConnected(number);
    setImmediate(() => {
      void this.options.events
        .presenceUpdate({
          toPhone: number.phone,
          contactPhone: phone,
          contactLid: null,
          groupId: null,
          presence: 'available',
          lastSeen: null,
          at: new Date(),
        })
        .catch((error: unknown) => this.unrecorded(error, number, 'a presence'));
    });
  }

  /** Nobody on the simulated network looks; whether the number shows itself online is kept for a look. */
  async setOnline(number: WhatsAppNumber, online: boolean): Promise<void> {
    this.assertConnected(number);
    this.simulator.online.set(number.id, online);
  }

  /**
   * A sandbox number's profile is kept here, as its phone would keep it; a contact that is a
   * sandbox number of this node shows what it set, and a simulated phone shows nothing.
   */
  async contactProfile(number: WhatsAppNumber, phone: E164): Promise<ContactProfile> {
    this.assertConnected(number);
    const profile = this.profiles.get(phone);
    const picture = profile?.picture;
    return {
      about: profile?.about ?? null,
      aboutSetAt: profile?.aboutSetAt ?? null,
      picture: picture === undefined ? null : { version: picture.version, download: async () => Readable.from([picture.bytes]) },
      business: null,
    };
  }

  async updateProfile(number: WhatsAppNumber, changes: ProfileChanges, picture?: OutgoingMedia): Promise<void> {
    this.assertConnected(number);
    const profile = this.profiles.get(number.phone) ?? {};
    if (changes.name !== undefined) profile.name = changes.name;
    if (changes.about !== undefined) Object.assign(profile, { about: changes.about, aboutSetAt: new Date() });
    if (picture !== undefined) profile.picture = { version: randomBytes(8).toString('hex'), bytes: await picture.read() };
    this.profiles.set(number.phone, profile);
  }

  /** The blocklist lives on the simulated network, as WhatsApp keeps it on its servers. */
  async updateBlock(number: WhatsAppNumber, phone: E164, blocked: boolean): Promise<void> {
    this.assertConnected(number);
    await this.options.network.setBlocked(number.phone, phone, blocked);
  }

  async blocklist(number: WhatsAppNumber): Promise<Contact[]> {
    this.assertConnected(number);
    return (await this.options.network.blocklistOf(number.phone)).map((phone) => ({ phone: phone as E164, lid: null }));
  }

  /** A call rejected stops ringing, so it is never missed; one that rang out already has nothing to stop. */
  async rejectCall(number: WhatsAppNumber, call: CallRef): Promise<void> {
    this.assertConnected(number);
    clearTimeout(this.simulator.ringing.get(call.callId));
    this.simulator.ringing.delete(call.callId);
  }

  /**
   * A number without a rehearsed cap answers as WhatsApp does for a number far from its cap:
   * status none, with no figures. With one (POST /sandbox/restrict, kind new_chat_cap), its
   * quota and cycle end, as this node last knew them. Reported as a read, as Baileys' is.
   */
  async newChatQuota(number: WhatsAppNumber): Promise<NewChatQuota> {
    this.assertConnected(number);
    const rehearsed = this.simulator.quotas.get(number.id);
    const quota: NewChatQuota =
      rehearsed !== undefined && rehearsed.cycleEndsAt !== null && rehearsed.cycleEndsAt > new Date()
        ? rehearsed
        : { status: 'none', total: null, used: null, cycleStartedAt: null, cycleEndsAt: null, error: null };
    const lease = this.sessions.get(number.id)?.lease;
    if (lease !== undefined) await this.options.events.newChatQuota({ lease, phone: number.phone, at: new Date(), kind: 'read', quota });
    return quota;
  }

  async downloadAgain(_number: WhatsAppNumber, retryToken: string): Promise<AsyncIterable<Buffer>> {
    const file = this.lateFiles.get(retryToken);
    if (file === undefined)
      throw new MediaGoneError('The sandbox no longer holds this file: it keeps late files only while the gateway runs.');
    if (file.failuresLeft > 0) {
      file.failuresLeft -= 1;
      throw new Error('The sandbox failed this download, as it was asked to.');
    }
    this.lateFiles.delete(retryToken);
    return Readable.from([Buffer.from(file.base64, 'base64')]);
  }

  /**
   * Rehearses a session that stays open and delivers nothing (issue 42 item 5): the number still
   * shows connected, but what the network carries to it (messages, receipts) waits there, as
   * WhatsApp's servers keep it, until `until`, when the session is restarted as the Baileys
   * watchdog restarts a quiet one: `connecting` with the quiet-session reason and the restart
   * counted, a new connection that takes what waited, then `connected`.
   */
  goQuiet(number: WhatsAppNumber, until: Date): void {
    const session = this.sessions.get(number.id);
    if (session?.connection === undefined || this.sessionStatus(number) !== 'connected')
      throw new EngineSendError('not_connected', `The sandbox session of ${number.phone} is not connected.`, this.sessionStatus(number));
    clearTimeout(session.quiet);
    const quietMs = Math.max(0, until.getTime() - Date.now());
    session.quiet = setTimeout(() => {
      void this.restartQuiet(number, session, quietMs).catch((error: unknown) => this.unrecorded(error, number, 'a quiet session'));
    }, quietMs);
    session.quiet.unref();
  }

  quiet(number: WhatsAppNumber): boolean {
    return this.sessions.get(number.id)?.quiet !== undefined;
  }

  private async restartQuiet(number: WhatsAppNumber, session: SandboxSession, quietMs: number): Promise<void> {
    session.quiet = undefined;
    if (this.sessions.get(number.id) !== session) return;
    const { lease } = session;
    const quietSeconds = Math.round(quietMs / 1000);
    await this.options.events.sessionStatusChanged({
      lease,
      phone: number.phone,
      status: 'connecting',
      reason: `quiet session: no traffic for ${quietSeconds} s and no answer to a probe (rehearsed on the sandbox); reconnecting`,
      quietRestart: true,
    });
    const quiet = session.connection;
    session.connection = undefined;
    // Closed first: what waited for the quiet connection goes to the new one.
    await quiet?.close();
    if (this.sessions.get(number.id) !== session) return;
    await this.connect(number, session);
    await this.options.events.sessionStatusChanged({
      lease,
      phone: number.phone,
      status: 'connected',
      reason: 'reconnected after a quiet session',
    });
  }
}
