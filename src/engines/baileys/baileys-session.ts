import type { BaileysEventMap, WAMessage, WAMessageUpdate } from 'baileys';
import { downloadMediaMessage, jidDecode } from 'baileys';
import { retryTokenOf } from './media-retry-token.ts';
import type { Logger } from 'pino';
import type { SessionLease, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { EngineEvents, IncomingMedia, LinkUpdate } from '../engine.ts';

export type { LinkUpdate };
import type { DatabaseAuthState } from './auth-state-store.ts';
import { lidNeedingLookup, mapIncomingMessage, type InboundMedia } from './inbound-mapper.ts';
import { mapReceiptUpdate } from './outbound-mapper.ts';
import { decideReconnect, type ReconnectDecision, type ReconnectPolicyOptions } from './reconnect-policy.ts';
import type { SessionSocket, SocketFactory } from './session-socket.ts';
import { SentMessageStore } from './sent-message-store.ts';
import { GroupMetadataCache } from './group-metadata-cache.ts';
import { mentionedMembers, participantChanges, settingsChanges } from './group-mapper.ts';
import type { GroupChange } from '../../domain/groups.ts';

export interface SessionTimings {
  reconnect: ReconnectPolicyOptions;
  /** How long an open session may go without any traffic before it is probed. */
  watchdogIdleMs: number;
  /** How often the watchdog looks. */
  watchdogIntervalMs: number;
  /** How long a probe may take before the session counts as dead. */
  probeTimeoutMs: number;
}

export interface SessionDependencies {
  number: WhatsAppNumber;
  /** The node's lease on the number: the session's status and receipts are written under it. */
  lease: SessionLease;
  socketFactory: SocketFactory;
  loadAuthState(): Promise<DatabaseAuthState>;
  events: EngineEvents;
  logger: Logger;
  timings: SessionTimings;
  version: [number, number, number] | undefined;
}

/**
 * One number's WhatsApp session: one socket at a time, reconnected by the policy, watched for
 * silence, and reporting its status. The old socket is always ended, and its listeners removed,
 * before a new one is made: two live sockets for one number is how sessions get replaced (440)
 * and messages get lost.
 */
/** Every event the session listens to on a socket, all removed when the socket ends. */
const SOCKET_EVENTS = ['creds.update', 'connection.update', 'messages.upsert', 'messages.update', 'groups.upsert', 'groups.update', 'group-participants.update'] as const;

export class BaileysSession {
  status: SessionStatus = 'connecting';
  private socket: SessionSocket | undefined;
  private auth: DatabaseAuthState | undefined;
  /** Bumped per socket, so that a late event of an ended socket is recognised and ignored. */
  private generation = 0;
  private consecutiveFailures = 0;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  private lastTrafficAt = Date.now();
  private probing = false;
  /** Whether the current socket has shown a QR: tells expired codes from a connection that never came up. */
  private qrShown = false;
  private readonly linkListeners = new Set<(update: LinkUpdate) => void>();
  readonly sentMessages = new SentMessageStore(1_000);
  readonly groups = new GroupMetadataCache();

  constructor(private readonly deps: SessionDependencies) {}

  get lease(): SessionLease {
    return this.deps.lease;
  }

  get socketForSending(): SessionSocket | undefined {
    return this.status === 'connected' ? this.socket : undefined;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.report('connecting', null);
    await this.openSocket();
    this.watchdogTimer ??= setInterval(() => void this.watchdog(), this.deps.timings.watchdogIntervalMs);
    this.watchdogTimer.unref();
  }

  /** Ends the session without unlinking it: creds stay, and the next start resumes. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.watchdogTimer);
    this.watchdogTimer = undefined;
    // Writes are queued in order, so saving once more waits for every pending one: the creds on
    // disk are the latest when the process exits.
    await this.auth?.saveCreds().catch((error: unknown) => this.deps.logger.error({ err: error }, 'could not save WhatsApp creds at shutdown'));
    this.endSocket();
  }

  onLinkUpdate(listener: (update: LinkUpdate) => void): () => void {
    this.linkListeners.add(listener);
    return () => this.linkListeners.delete(listener);
  }

  /**
   * Asks WhatsApp for an 8-character pairing code. Only a socket that is ready to link may ask;
   * asking earlier fails with 428, so this waits for the first QR, which marks that moment.
   */
  async requestPairingCode(timeoutMs = 30_000): Promise<string> {
    const socket = await new Promise<SessionSocket>((resolve, reject) => {
      const timer = setTimeout(() => (unsubscribe(), reject(new Error('The session did not become ready to link in time.'))), timeoutMs);
      const unsubscribe = this.onLinkUpdate((update) => {
        if (update.qr === undefined || this.socket === undefined) return;
        clearTimeout(timer);
        unsubscribe();
        resolve(this.socket);
      });
    });
    const code = await socket.requestPairingCode(this.deps.number.phone.slice(1));
    this.emitLink({ pairingCode: code, status: this.status });
    return code;
  }

  markTraffic(): void {
    this.lastTrafficAt = Date.now();
  }

  private async openSocket(): Promise<void> {
    this.endSocket();
    this.auth = await this.deps.loadAuthState();
    // stop() may have come while the auth state loaded: no socket may outlive the session.
    if (this.stopped) return;
    const generation = ++this.generation;
    this.qrShown = false;
    const socket = this.deps.socketFactory({
      auth: this.auth.state,
      logger: this.deps.logger,
      getMessage: (id) => this.sentMessages.get(id),
      cachedGroupMetadata: (jid) => this.groups.cached(jid),
      version: this.deps.version,
    });
    this.socket = socket;
    const current = () => generation === this.generation && !this.stopped;
    socket.ev.on('creds.update', () => void this.auth?.saveCreds().catch((error: unknown) => this.deps.logger.error({ err: error }, 'could not save WhatsApp creds')));
    socket.ev.on('connection.update', (update) => current() && void this.onConnectionUpdate(update));
    socket.ev.on('messages.upsert', (upsert) => current() && void this.onMessages(upsert));
    socket.ev.on('messages.update', (updates) => current() && void this.onReceipts(updates));
    // A group that changed is fetched afresh when next needed; one that was just described is kept.
    socket.ev.on('groups.upsert', (groups) => current() && groups.forEach((group) => this.groups.put(group)));
    socket.ev.on('groups.update', (updates) => {
      if (!current()) return;
      for (const update of updates) {
        if (update.id) this.groups.forget(update.id);
        this.reportGroupChanges(settingsChanges(update, new Date()));
      }
    });
    socket.ev.on('group-participants.update', (update) => {
      if (!current()) return;
      this.groups.forget(update.id);
      this.reportGroupChanges(participantChanges(update, new Date()));
    });
  }

  private endSocket(): void {
    const socket = this.socket;
    this.socket = undefined;
    this.generation += 1;
    if (socket === undefined) return;
    for (const event of SOCKET_EVENTS) socket.ev.removeAllListeners(event);
    try {
      socket.end(undefined);
    } catch (error) {
      this.deps.logger.debug({ err: error }, 'ending an old socket failed');
    }
  }

  private async onConnectionUpdate(update: BaileysEventMap['connection.update']): Promise<void> {
    this.markTraffic();
    if (update.qr !== undefined) {
      this.qrShown = true;
      this.emitLink({ qr: update.qr, status: this.status });
    }
    if (update.connection === 'open') await this.onOpen();
    if (update.connection === 'close') {
      const error = update.lastDisconnect?.error as { message?: string; output?: { statusCode?: number } } | undefined;
      const linking = this.auth?.state.creds.me === undefined;
      const facts = { statusCode: error?.output?.statusCode, linking, qrShown: this.qrShown, consecutiveFailures: this.consecutiveFailures };
      const decision = decideReconnect(facts, this.deps.timings.reconnect);
      // The code alone rarely says why ("408"); the error's own words do ("ENOTFOUND web.whatsapp.com").
      const detail = error?.message === undefined || error.message === '' ? '' : `: ${error.message}`;
      await this.act({ ...decision, reason: `${decision.reason}${detail}` });
    }
  }

  private async onOpen(): Promise<void> {
    const linkedPhone = this.linkedPhone();
    if (linkedPhone !== undefined && linkedPhone !== this.deps.number.phone) {
      // The wrong phone scanned the code: this session must not speak for the number.
      const reason = `the phone that linked is ${linkedPhone}, not ${this.deps.number.phone}; link again from the right phone`;
      // Unlinking the wrong phone is a courtesy to it; the session ends and its keys go either way.
      await this.socket?.logout().catch((error: unknown) => this.deps.logger.debug({ err: error }, 'could not log the wrong phone out'));
      this.endSocket();
      await this.auth?.clear();
      await this.report('logged_out', reason);
      return;
    }
    this.consecutiveFailures = 0;
    await this.report('connected', null);
  }

  private linkedPhone(): string | undefined {
    const user = this.socket?.user?.id ?? this.auth?.state.creds.me?.id;
    const digits = user === undefined ? undefined : jidDecode(user)?.user;
    return digits === undefined ? undefined : `+${digits}`;
  }

  private async act(decision: ReconnectDecision): Promise<void> {
    switch (decision.action) {
      case 'restart_now':
        this.deps.logger.info(decision.reason);
        await this.openSocket();
        return;
      case 'retry':
        this.consecutiveFailures += 1;
        // One line per backoff step, so an offline gateway does not flood its log.
        this.deps.logger.warn({ retryInMs: decision.delayMs }, decision.reason);
        await this.report('disconnected', decision.reason);
        this.endSocket();
        this.reconnectTimer = setTimeout(() => void this.openSocket().catch((error: unknown) => this.failToOpen(error)), decision.delayMs);
        this.reconnectTimer.unref();
        return;
      case 'logged_out':
        this.endSocket();
        await this.auth?.clear();
        await this.report('logged_out', decision.reason);
        return;
      case 'conflict':
      case 'link_expired':
        this.endSocket();
        await this.report(decision.action, decision.reason);
        return;
      case 'give_up':
        this.endSocket();
        await this.report('failed', decision.reason);
        return;
    }
  }

  private async failToOpen(error: unknown): Promise<void> {
    this.deps.logger.error({ err: error }, 'could not open a WhatsApp socket');
    await this.act(decideReconnect({ statusCode: undefined, linking: false, consecutiveFailures: this.consecutiveFailures }, this.deps.timings.reconnect));
  }

  private async onMessages(upsert: BaileysEventMap['messages.upsert']): Promise<void> {
    this.markTraffic();
    // History and appends are old news; only `notify` is a message arriving now.
    if (upsert.type !== 'notify') return;
    for (const message of upsert.messages) await this.receive(message);
  }

  private async receive(message: WAMessage): Promise<void> {
    const lid = lidNeedingLookup(message);
    const phoneJid = lid === undefined ? undefined : await this.socket?.signalRepository.lidMapping.getPNForLID(lid).catch(() => null);
    const decision = mapIncomingMessage(message, () => phoneJid ?? undefined);
    if (decision.kind === 'skip') {
      this.deps.logger.debug({ reason: decision.reason, id: message.key.id }, 'skipped an incoming WhatsApp message');
      return;
    }
    if (decision.kind === 'action') {
      await this.deps.events.incomingAction({
        toPhone: this.deps.number.phone,
        actorPhone: decision.fromMe ? this.deps.number.phone : decision.fromPhone,
        actorLid: decision.fromMe ? null : decision.fromLid,
        fromMe: decision.fromMe,
        targetEngineId: decision.targetEngineId,
        action: decision.action,
        at: decision.timestamp ?? new Date(),
        ...(decision.groupId !== null && { groupId: decision.groupId }),
      });
      return;
    }
    const group = decision.groupId === null ? undefined : { id: decision.groupId, subject: await this.groupSubject(decision.groupId) };
    const mentions = decision.groupId === null ? [] : mentionedMembers(this.groups.cached(decision.groupId), decision.mentionedJids);
    await this.deps.events.incomingMessage({
      toPhone: this.deps.number.phone,
      fromPhone: decision.fromPhone,
      fromLid: decision.fromLid,
      contentKind: decision.contentKind,
      text: decision.text,
      ...(decision.media !== null && { media: this.downloadable(message, decision.media) }),
      ...(decision.structured !== null && { structured: decision.structured }),
      engineMessageId: decision.engineMessageId,
      receivedAt: decision.timestamp ?? new Date(),
      ...(decision.quotedEngineId !== null && { quotedEngineId: decision.quotedEngineId }),
      ...(group !== undefined && { group, mentions }),
    });
  }

  private reportGroupChanges(changes: readonly GroupChange[]): void {
    for (const change of changes) {
      this.deps.events.groupChanged({ ...change, toPhone: this.deps.number.phone }).catch((error: unknown) => this.deps.logger.error({ err: error, group: change.groupId }, 'could not record a group change'));
    }
  }

  /** A group's subject from the session's cache, fetched once when missing; null if WhatsApp will not say. */
  private async groupSubject(groupId: string): Promise<string | null> {
    const socket = this.socket;
    if (socket === undefined) return this.groups.cached(groupId)?.subject ?? null;
    return this.groups.get(groupId, (jid) => socket.groupMetadata(jid)).then((metadata) => metadata.subject, () => null);
  }

  /**
   * The file of an incoming message, fetched from WhatsApp's servers when the receive path asks.
   * A link that has expired is renewed by asking the sender's phone to upload it again.
   */
  private downloadable(message: WAMessage, media: InboundMedia): IncomingMedia {
    return { ...media, retryToken: retryTokenOf(message), download: () => this.download(message) };
  }

  /** Downloads a file of an incoming message, now or on a retry (`Engine.downloadAgain`). */
  async download(message: WAMessage): Promise<AsyncIterable<Buffer>> {
    const socket = this.socket;
    const stream = await downloadMediaMessage(message, 'stream', {}, {
      logger: this.deps.logger.child({ component: 'baileys-media' }, { level: 'warn' }),
      reuploadRequest: (stale: WAMessage) => (socket === undefined ? Promise.reject(new Error('the session closed')) : socket.updateMediaMessage(stale)),
    });
    return stream as AsyncIterable<Buffer>;
  }

  private async onReceipts(updates: WAMessageUpdate[]): Promise<void> {
    this.markTraffic();
    for (const update of updates) {
      const receipt = mapReceiptUpdate(update);
      // `sent` is already what the send answered; only later news is worth an event.
      if (receipt === undefined || receipt.status === 'sent') continue;
      await this.deps.events.receipt({ lease: this.deps.lease, phone: this.deps.number.phone, engineMessageId: receipt.engineMessageId, status: receipt.status, errorCode: receipt.errorCode ?? null, at: new Date() });
    }
  }

  /** A session that says "open" but has heard nothing for a while is asked a cheap question. */
  private async watchdog(): Promise<void> {
    const socket = this.socket;
    if (this.probing || this.status !== 'connected' || socket === undefined || Date.now() - this.lastTrafficAt < this.deps.timings.watchdogIdleMs) return;
    // One probe at a time: overlapping probes would each restart the session in turn.
    this.probing = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('the probe timed out')), this.deps.timings.probeTimeoutMs);
        timer.unref();
      });
      await Promise.race([socket.onWhatsApp(this.deps.number.phone.slice(1)), timeout]);
      this.markTraffic();
    } catch (error) {
      // Only the socket that was probed is restarted, and only while the session still runs.
      if (this.stopped || socket !== this.socket) return;
      this.deps.logger.warn({ err: error }, 'an open WhatsApp session did not answer a probe; restarting it');
      // Sends get 503 until the new socket opens, rather than going to a socket that is not up.
      await this.report('connecting', 'the session did not answer a probe; reconnecting');
      await this.openSocket();
    } finally {
      clearTimeout(timer);
      this.probing = false;
    }
  }

  async report(status: SessionStatus, reason: string | null): Promise<void> {
    const changed = status !== this.status;
    this.status = status;
    this.emitLink({ status, reason });
    if (changed || status === 'connecting') await this.deps.events.sessionStatusChanged({ lease: this.deps.lease, phone: this.deps.number.phone, status, reason });
  }

  private emitLink(update: LinkUpdate): void {
    for (const listener of this.linkListeners) listener(update);
  }
}
