/**
 * The WhatsApp side of the Baileys adapter's tests. The network cannot be reached from a test, so
 * an injected socket factory hands sessions fake sockets that emit Baileys-shaped events, built
 * with Baileys' own `proto` types; everything from the session inwards is the real code.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { Boom } from '@hapi/boom';
import { initAuthCreds, proto, ReachoutTimelockEnforcementType } from 'baileys';
import type {
  AnyMessageContent,
  BaileysEventMap,
  BinaryNode,
  ParticipantAction,
  ReachoutTimelockState,
  ChatModification,
  GroupMetadata,
  MiscMessageGenerationOptions,
  NewChatMessageCapInfo,
  SignalDataSet,
  SignalDataTypeMap,
  SignalKeyStore,
  WAMessage,
  WAMessageKey,
  WABusinessProfile,
  WAMediaUpload,
} from 'baileys';
import { pino, type Logger } from 'pino';
import type { GroupChange } from '../../src/domain/groups.ts';
import { newId } from '../../src/domain/ids.ts';
import type { Message, SessionStatus } from '../../src/domain/model.ts';
import type { DatabaseAuthState } from '../../src/engines/baileys/auth-state-store.ts';
import type { SessionSocket, SocketFactory, SocketOptions } from '../../src/engines/baileys/session-socket.ts';
import type {
  EngineEvents,
  IdentitiesLearned,
  IncomingActionEvent,
  IncomingMessageEvent,
  NumberRestrictedEvent,
  ReceiptEvent,
  RestrictionLiftedEvent,
  NewChatQuotaEvent,
  SessionStatusEvent,
  IncomingCallEvent,
  PresenceEvent,
  IncomingPollVoteEvent,
} from '../../src/engines/engine-events.ts';
import { SOCKET_EVENTS } from '../../src/engines/baileys/baileys-session.ts';
import { waitUntil } from './waiting.ts';

type EventName = keyof BaileysEventMap;
// The fake answers for exactly the events the session listens to.
const SESSION_EVENTS: readonly EventName[] = SOCKET_EVENTS;

/** A socket whose every method is a stub that records its calls; the test emits its events. */
/**
 * What a double of the socket must be: any part of Baileys' socket, each method it has checked
 * against Baileys' signature, and of the event emitter the two methods the session calls.
 */
type SocketDouble = Omit<Partial<SessionSocket>, 'ev' | 'signalRepository'> & {
  ev: Pick<SessionSocket['ev'], 'on' | 'removeAllListeners'>;
  signalRepository: { lidMapping: Pick<SessionSocket['signalRepository']['lidMapping'], 'getPNForLID'> };
};

export class FakeSocket implements SocketDouble {
  private readonly emitter = new EventEmitter();
  readonly ev: SocketDouble['ev'] = {
    on: <T extends EventName>(event: T, listener: (arg: BaileysEventMap[T]) => void) => void this.emitter.on(event, listener),
    removeAllListeners: <T extends EventName>(event: T) => void this.emitter.removeAllListeners(event),
  };
  user: { id: string; lid?: string } | undefined;
  readonly createdAt = Date.now();
  readonly endCalls: (Error | undefined)[] = [];
  logoutCalls = 0;
  readonly sendCalls: { jid: string; content: AnyMessageContent; options?: MiscMessageGenerationOptions; at: number }[] = [];
  readonly readCalls: WAMessageKey[][] = [];
  readonly onWhatsAppCalls: string[][] = [];
  readonly pairingCodeCalls: string[] = [];
  readonly lidLookups: string[] = [];
  /** LID jid → PN jid, as Baileys' LID mapping store would answer. */
  readonly lidMapping = new Map<string, string>();
  answerOnWhatsApp: (phones: string[]) => Promise<Array<{ jid: string; exists: boolean; lid?: string }> | undefined> = async (phones) =>
    phones.map((phone) => ({ jid: `${phone}@s.whatsapp.net`, exists: true }));
  answerSend: (jid: string, content: AnyMessageContent) => Promise<proto.IWebMessageInfo | undefined> = async (jid, content) =>
    proto.WebMessageInfo.fromObject({
      key: { remoteJid: jid, fromMe: true, id: `3EB0OUT${this.sendCalls.length}` },
      message: { conversation: 'text' in content ? content.text : '' },
    });

  readonly signalRepository = {
    lidMapping: {
      getPNForLID: async (lid: string): Promise<string | null> => {
        this.lidLookups.push(lid);
        return this.lidMapping.get(lid) ?? null;
      },
    },
  };

  emit<T extends EventName>(event: T, arg: BaileysEventMap[T]): void {
    this.emitter.emit(event, arg);
  }

  listenerCount(): number {
    return SESSION_EVENTS.reduce((sum, event) => sum + this.emitter.listenerCount(event), 0);
  }

  closeWith(statusCode: number): void {
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: new Boom('closed', { statusCode }), date: new Date() },
    });
  }

  openAs(phoneDigits: string): void {
    this.user = { id: `${phoneDigits}:1@s.whatsapp.net` };
    this.emit('connection.update', { connection: 'open' });
  }

  async end(error: Error | undefined): Promise<void> {
    this.endCalls.push(error);
  }

  async logout(): Promise<void> {
    this.logoutCalls += 1;
  }

  /** What the session handed Baileys as `cachedGroupMetadata`. */
  cachedGroupMetadata: SocketOptions['cachedGroupMetadata'] | undefined;

  async sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined> {
    this.sendCalls.push({ jid, content, ...(options !== undefined && { options }), at: Date.now() });
    // As Baileys' relay does: a group's participants come from cachedGroupMetadata, and only
    // when that has none, from a metadata query to WhatsApp.
    if (jid.endsWith('@g.us') && this.cachedGroupMetadata?.(jid) === undefined) await this.groupMetadata(jid);
    // The tests' answers are WhatsApp's message info; Baileys types its answer with a key always set.
    return (await this.answerSend(jid, content)) as WAMessage | undefined;
  }

  readonly chatModifyCalls: { modification: ChatModification; jid: string }[] = [];

  async chatModify(modification: ChatModification, jid: string): Promise<void> {
    this.chatModifyCalls.push({ modification, jid });
  }

  async readMessages(keys: WAMessageKey[]): Promise<void> {
    this.readCalls.push(keys);
  }

  async onWhatsApp(...phoneNumbers: string[]): Promise<Array<{ jid: string; exists: boolean; lid?: string }> | undefined> {
    this.onWhatsAppCalls.push(phoneNumbers);
    return this.answerOnWhatsApp(phoneNumbers);
  }

  readonly presenceCalls: { type: string; jid: string | undefined }[] = [];

  async sendPresenceUpdate(type: 'available' | 'unavailable' | 'composing' | 'recording' | 'paused', toJid?: string): Promise<void> {
    this.presenceCalls.push({ type, jid: toJid });
  }

  readonly presenceSubscriptions: string[] = [];

  async presenceSubscribe(toJid: string): Promise<void> {
    this.presenceSubscriptions.push(toJid);
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.pairingCodeCalls.push(phoneNumber);
    return 'WAGW2345';
  }

  /** The groups WhatsApp knows this number in, by JID, as Baileys describes them. */
  readonly groups = new Map<string, GroupMetadata>();
  readonly groupMetadataCalls: string[] = [];

  async groupCreate(subject: string, participants: string[]): Promise<GroupMetadata> {
    const me = this.user?.id.replace(/:\d+@/, '@') ?? 'unknown@s.whatsapp.net';
    const id = `120363${String(this.groups.size + 1).padStart(12, '0')}@g.us`;
    const metadata: GroupMetadata = {
      id,
      subject,
      owner: me,
      participants: [{ id: me, admin: 'superadmin' }, ...participants.map((jid) => ({ id: jid, admin: null }))],
    };
    this.groups.set(id, metadata);
    return metadata;
  }

  async groupFetchAllParticipating(): Promise<{ [jid: string]: GroupMetadata }> {
    return Object.fromEntries(this.groups);
  }

  async groupMetadata(jid: string): Promise<GroupMetadata> {
    this.groupMetadataCalls.push(jid);
    return this.groupCall('metadata', jid);
  }

  /** Set to make the next group query fail as WhatsApp does (rate-overlimit, say). */
  failNextGroupCall: Error | undefined;
  readonly groupCalls: string[] = [];

  private groupCall(name: string, jid: string): GroupMetadata {
    this.groupCalls.push(`${name} ${jid}`);
    const failure = this.failNextGroupCall;
    this.failNextGroupCall = undefined;
    if (failure !== undefined) throw failure;
    const metadata = this.groups.get(jid);
    if (metadata === undefined) throw new Boom('item-not-found', { statusCode: 404 });
    return metadata;
  }

  /** As WhatsApp answers: 409 for a phone already in, 403 for one whose privacy refuses adds (digits ending 403), 404 for removing a non-member. */
  async groupParticipantsUpdate(
    jid: string,
    participants: string[],
    action: ParticipantAction,
  ): Promise<Array<{ status: string; jid: string | undefined; content: BinaryNode }>> {
    const metadata = this.groupCall('participants', jid);
    return participants.map((participant) => {
      const status = this.changeParticipant(metadata, participant, action);
      return { status, jid: participant, content: { tag: 'participant', attrs: { jid: participant, error: status } } };
    });
  }

  private changeParticipant(metadata: GroupMetadata, participant: string, action: ParticipantAction): string {
    const index = metadata.participants.findIndex((each) => each.id === participant || each.phoneNumber === participant);
    if (action === 'add') {
      if (index >= 0) return '409';
      if (participant.split('@')[0]!.endsWith('403')) return '403';
      metadata.participants.push({ id: participant, admin: null });
      return '200';
    }
    if (index < 0) return '404';
    if (action === 'remove') metadata.participants.splice(index, 1);
    else metadata.participants[index] = { ...metadata.participants[index]!, admin: action === 'promote' ? 'admin' : null };
    return '200';
  }

  async groupUpdateSubject(jid: string, subject: string): Promise<void> {
    this.groupCall('subject', jid).subject = subject;
  }

  async groupUpdateDescription(jid: string, description?: string): Promise<void> {
    this.groupCall('description', jid).desc = description;
  }

  inviteCodes = 0;

  async groupInviteCode(jid: string): Promise<string | undefined> {
    this.groupCall('invite', jid);
    return `INVITE${this.inviteCodes}`;
  }

  async groupRevokeInvite(jid: string): Promise<string | undefined> {
    this.groupCall('revoke', jid);
    this.inviteCodes += 1;
    return `INVITE${this.inviteCodes}`;
  }

  async groupLeave(jid: string): Promise<void> {
    this.groupCall('leave', jid);
    this.groups.delete(jid);
  }

  /** WhatsApp's answer to fetchAccountReachoutTimelock, which Baileys also emits as connection.update. */
  reachoutTimelock: { isActive: boolean; timeEnforcementEnds?: Date; enforcementType?: ReachoutTimelockEnforcementType } = {
    isActive: false,
    enforcementType: ReachoutTimelockEnforcementType.DEFAULT,
  };
  timelockFetches = 0;

  async fetchAccountReachoutTimelock(): Promise<ReachoutTimelockState> {
    this.timelockFetches += 1;
    const answer = { ...this.reachoutTimelock };
    this.emit('connection.update', { reachoutTimeLock: answer });
    return answer;
  }

  /** Contacts' profiles as WhatsApp would answer them, by JID; a JID not here has none (404). */
  readonly profiles = new Map<string, { pictureUrl?: string; about?: string; aboutSetAt?: Date; business?: WABusinessProfile }>();
  readonly profileQueries: string[] = [];
  readonly ownProfileChanges: { name?: string; about?: string; picture?: { jid: string; bytes: Buffer } }[] = [];

  async profilePictureUrl(jid: string): Promise<string | undefined> {
    this.profileQueries.push(`picture ${jid}`);
    const url = this.profiles.get(jid)?.pictureUrl;
    if (url === undefined) throw new Boom('item-not-found', { statusCode: 404 });
    return url;
  }

  async fetchStatus(...jids: string[]): Promise<Array<{ id: string; status?: unknown }> | undefined> {
    this.profileQueries.push(`status ${jids.join(',')}`);
    return jids.map((id) => ({
      id,
      status: { status: this.profiles.get(id)?.about ?? null, setAt: this.profiles.get(id)?.aboutSetAt ?? new Date(0) },
    }));
  }

  async getBusinessProfile(jid: string): Promise<WABusinessProfile | undefined> {
    this.profileQueries.push(`business ${jid}`);
    return this.profiles.get(jid)?.business;
  }

  async updateProfileName(name: string): Promise<void> {
    this.ownProfileChanges.push({ name });
  }

  async updateProfileStatus(about: string): Promise<void> {
    this.ownProfileChanges.push({ about });
  }

  async updateProfilePicture(jid: string, content: WAMediaUpload): Promise<void> {
    assert.ok(Buffer.isBuffer(content), 'the picture is handed over as bytes');
    this.ownProfileChanges.push({ picture: { jid, bytes: content } });
  }

  /** The JIDs WhatsApp holds as blocked by this number, in order. */
  readonly blocked: string[] = [];

  async updateBlockStatus(jid: string, action: 'block' | 'unblock'): Promise<void> {
    const index = this.blocked.indexOf(jid);
    if (action === 'block' && index < 0) this.blocked.push(jid);
    if (action === 'unblock' && index >= 0) this.blocked.splice(index, 1);
  }

  async fetchBlocklist(): Promise<(string | undefined)[]> {
    return [...this.blocked];
  }

  readonly rejectedCalls: { callId: string; callFrom: string }[] = [];

  async rejectCall(callId: string, callFrom: string): Promise<void> {
    this.rejectedCalls.push({ callId, callFrom });
  }

  readonly reuploadRequests: WAMessage[] = [];

  /** WhatsApp's answer to a request to upload a file again: here, the message as it was. */
  async updateMediaMessage(message: WAMessage): Promise<WAMessage> {
    this.reuploadRequests.push(message);
    return message;
  }

  /**
   * WhatsApp's answer to the capping query (NewChatMessageCapInfo, every field optional), or the
   * error it answers some accounts with: a Boom whose message Baileys' executeWMexQuery builds.
   */
  newChatCap: NewChatMessageCapInfo | Error = {};

  async fetchNewChatMessageCap(): Promise<NewChatMessageCapInfo> {
    if (this.newChatCap instanceof Error) throw this.newChatCap;
    return this.newChatCap;
  }
}

/** Records every socket it makes, and what the earlier sockets looked like at that moment. */
export class RecordingSocketFactory {
  readonly sockets: FakeSocket[] = [];
  readonly options: SocketOptions[] = [];
  /** Per socket: had every earlier socket been ended, with no listeners left, when it was made? */
  readonly earlierSocketsClosedAtCreation: boolean[] = [];
  /** Lets a test shape a socket as it is made, e.g. one whose probe never answers. */
  prepare: (socket: FakeSocket, index: number) => void = () => undefined;

  readonly create: SocketFactory = (options) => {
    this.earlierSocketsClosedAtCreation.push(this.sockets.every((socket) => socket.endCalls.length > 0 && socket.listenerCount() === 0));
    const socket = new FakeSocket();
    socket.cachedGroupMetadata = options.cachedGroupMetadata;
    this.prepare(socket, this.sockets.length);
    this.sockets.push(socket);
    this.options.push(options);
    // The double has the part of Baileys' socket the session uses; a method it lacks fails the test loudly.
    return socket as unknown as SessionSocket;
  };

  get latest(): FakeSocket {
    const socket = this.sockets.at(-1);
    assert.ok(socket, 'a socket was made');
    return socket;
  }
}

/** The auth state in memory: the same object on every load, as the database would give back. */
export class MemoryAuthState implements DatabaseAuthState {
  saveCalls = 0;
  clearCalls = 0;
  private readonly stored = new Map<string, unknown>();
  readonly state: DatabaseAuthState['state'];

  constructor() {
    const stored = this.stored;
    const keys: SignalKeyStore = {
      async get<T extends keyof SignalDataTypeMap>(category: T, ids: string[]) {
        const found: { [id: string]: SignalDataTypeMap[T] } = {};
        for (const id of ids) {
          const value = stored.get(`${category}/${id}`);
          if (value !== undefined) found[id] = value as SignalDataTypeMap[T];
        }
        return found;
      },
      async set(data: SignalDataSet) {
        for (const [category, entries] of Object.entries(data)) {
          for (const [id, value] of Object.entries(entries ?? {})) {
            if (value === null || value === undefined) stored.delete(`${category}/${id}`);
            else stored.set(`${category}/${id}`, value);
          }
        }
      },
    };
    this.state = { creds: initAuthCreds(), keys };
  }

  markLinked(phoneDigits: string): void {
    this.state.creds.me = { id: `${phoneDigits}:1@s.whatsapp.net` };
  }

  async saveCreds(): Promise<void> {
    this.saveCalls += 1;
  }

  async clear(): Promise<void> {
    this.clearCalls += 1;
    this.stored.clear();
  }
}

export class RecordingEvents implements EngineEvents {
  readonly incoming: IncomingMessageEvent[] = [];
  readonly statuses: SessionStatusEvent[] = [];
  readonly receipts: ReceiptEvent[] = [];
  readonly actions: IncomingActionEvent[] = [];
  readonly groupChanges: (GroupChange & { toPhone: string })[] = [];
  readonly restrictions: NumberRestrictedEvent[] = [];
  readonly lifts: RestrictionLiftedEvent[] = [];

  async numberRestricted(event: NumberRestrictedEvent): Promise<void> {
    this.restrictions.push(event);
  }

  async restrictionLifted(event: RestrictionLiftedEvent): Promise<void> {
    this.lifts.push(event);
  }

  readonly quotas: NewChatQuotaEvent[] = [];

  async newChatQuota(event: NewChatQuotaEvent): Promise<void> {
    this.quotas.push(event);
  }

  readonly identities: IdentitiesLearned[] = [];

  async identitiesLearned(event: IdentitiesLearned): Promise<void> {
    this.identities.push(event);
  }

  readonly calls: IncomingCallEvent[] = [];
  readonly presences: PresenceEvent[] = [];

  async presenceUpdate(event: PresenceEvent): Promise<void> {
    this.presences.push(event);
  }

  async incomingCall(event: IncomingCallEvent): Promise<void> {
    this.calls.push(event);
  }

  readonly votes: IncomingPollVoteEvent[] = [];

  async pollVote(event: IncomingPollVoteEvent): Promise<void> {
    this.votes.push(event);
  }

  async groupChanged(event: GroupChange & { toPhone: string }): Promise<void> {
    this.groupChanges.push(event);
  }

  async incomingMessage(event: IncomingMessageEvent): Promise<Message> {
    this.incoming.push(event);
    return {
      id: newId('message'),
      accountId: newId('account'),
      numberId: null,
      direction: 'inbound',
      fromPhone: event.fromPhone,
      fromLid: event.fromLid,
      toPhone: event.toPhone,
      text: event.text,
      contentKind: event.contentKind,
      mediaId: null,
      structured: null,
      status: 'received',
      engineMessageId: event.engineMessageId,
      createdAt: event.receivedAt,
    };
  }

  async sessionStatusChanged(event: SessionStatusEvent): Promise<void> {
    this.statuses.push(event);
  }

  async receipt(event: ReceiptEvent): Promise<void> {
    this.receipts.push(event);
  }

  async incomingAction(event: IncomingActionEvent): Promise<void> {
    this.actions.push(event);
  }

  statusNames(): SessionStatus[] {
    return this.statuses.map((event) => event.status);
  }
}

/** A real pino logger whose lines land in an array, so a test can count the warnings. */
export function recordingLogger(): { logger: Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

export const WARN_LEVEL = 40;

/** Waits until `condition` holds (test/support/waiting.ts), looking every 2 ms. */
export function waitFor(what: string, condition: () => boolean): Promise<void> {
  return waitUntil(condition, what, 2);
}
