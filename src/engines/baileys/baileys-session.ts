import type { BaileysEventMap } from 'baileys';
import { jidDecode } from 'baileys';
import type { Logger } from 'pino';
import type { SessionLease, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { LinkUpdate } from '../engine.ts';
import type { EngineEvents, NumberRestrictedEvent } from '../engine-events.ts';
import { timelockNews, type TimelockNews } from './restrictions.ts';
import { failedCapRead, mapCapInfo } from './capping-mapper.ts';
import type { NewChatQuota } from '../engine.ts';

export type { LinkUpdate };
import type { DatabaseAuthState } from './auth-state-store.ts';
import { SessionInbound } from './session-inbound.ts';
import { decideReconnect, type DisconnectFacts, type ReconnectDecision, type ReconnectPolicyOptions } from './reconnect-policy.ts';
import { proxyRoute, type ProxyRoute } from './proxy-route.ts';
import { proxyFailureOf } from './proxy-failures.ts';
import type { ProxyUrl } from '../../domain/proxy-url.ts';
import type { SessionSocket, SocketFactory } from './session-socket.ts';
import { SentMessageStore } from './sent-message-store.ts';
import { GroupMetadataCache } from './group-metadata-cache.ts';
import { participantChanges, settingsChanges } from './group-mapper.ts';
import { identitiesOfGroup, identityOfMapping } from './identity-mapper.ts';

/** The most presence subscriptions a session renews on reconnecting. */
const MAX_PRESENCE_SUBSCRIPTIONS = 256;

export interface SessionTimings {
  reconnect: ReconnectPolicyOptions;
  /** How long an open session may go without any traffic before it is probed. */
  watchdogIdleMs: number;
  /** How often the watchdog looks. */
  watchdogIntervalMs: number;
  /** How long a placeholder (a message whose content WhatsApp left out) waits for its resent copy. */
  placeholderWaitMs: number;
  /** How long a probe may take before the session counts as dead. */
  probeTimeoutMs: number;
  /** How often a connected session reads WhatsApp's cap on its new chats (WAGW_NEW_CHAT_QUOTA_CHECK_MINUTES). */
  quotaCheckIntervalMs: number;
}

export interface SessionDependencies {
  number: WhatsAppNumber;
  /** The node's lease on the number: the session's status and receipts are written under it. */
  lease: SessionLease;
  socketFactory: SocketFactory;
  loadAuthState(): Promise<DatabaseAuthState>;
  /** The number's proxy as stored now (ADR 0063), read for every connection; undefined connects directly. */
  loadProxy(): Promise<ProxyUrl | undefined>;
  events: EngineEvents;
  logger: Logger;
  timings: SessionTimings;
  version: [number, number, number] | undefined;
}

/** Every event the session listens to on a socket, all removed when the socket ends. */
export const SOCKET_EVENTS = [
  'creds.update',
  'connection.update',
  'messages.upsert',
  'messages.update',
  'groups.upsert',
  'groups.update',
  'group-participants.update',
  'lid-mapping.update',
  'messaging-history.set',
  'call',
  'presence.update',
  'message-capping.update',
] as const;

/**
 * One number's WhatsApp session: one socket at a time, reconnected by the policy, watched for
 * silence, and reporting its status. The old socket is always ended, and its listeners removed,
 * before a new one is made: two live sockets for one number is how sessions get replaced (440)
 * and messages get lost. What the socket hears is reported by its `inbound` side (session-inbound.ts).
 */
export class BaileysSession {
  status: SessionStatus = 'connecting';
  private socket: SessionSocket | undefined;
  /** The current socket's way out through the number's proxy; its downloads use it too. */
  private route: ProxyRoute | undefined;
  private auth: DatabaseAuthState | undefined;
  /** Bumped per socket, so that a late event of an ended socket is recognised and ignored. */
  private generation = 0;
  private consecutiveFailures = 0;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  private quotaTimer: NodeJS.Timeout | undefined;
  private lastTrafficAt = Date.now();
  private probing = false;
  /** Whether the current socket has shown a QR: tells expired codes from a connection that never came up. */
  private qrShown = false;
  private readonly linkListeners = new Set<(update: LinkUpdate) => void>();
  readonly sentMessages = new SentMessageStore(1_000);
  readonly groups = new GroupMetadataCache((metadata) => this.inbound.reportIdentities(identitiesOfGroup(metadata), 'group'));
  /** Whether the number shows itself online: its setting at start, then as setOnline changes it. */
  showOnline: boolean;
  /**
   * The contacts whose presence the API subscribed to, by JID, oldest first: WhatsApp keeps a
   * subscription only for the connection that made it, so each new connection renews them.
   */
  private readonly presenceSubscriptions = new Set<string>();
  /** What the socket hears, reported as the gateway's events (session-inbound.ts). */
  readonly inbound: SessionInbound;

  constructor(private readonly deps: SessionDependencies) {
    this.showOnline = deps.number.showOnline;
    this.inbound = new SessionInbound(deps, deps.timings.placeholderWaitMs, {
      socket: () => this.socket,
      dispatcher: () => this.route?.dispatcher,
      me: () => this.auth?.state.creds.me,
      markTraffic: () => this.markTraffic(),
      groups: this.groups,
      capMet: (detail) => this.capMet(detail),
      restricted: (reason, until, detail) => this.restricted(reason, until, detail),
    });
  }

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
    this.quotaTimer ??= setInterval(() => {
      if (this.status === 'connected') void this.readQuota();
    }, this.deps.timings.quotaCheckIntervalMs);
    this.quotaTimer.unref();
  }

  /** Ends the session without unlinking it: creds stay, and the next start resumes. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.watchdogTimer);
    this.watchdogTimer = undefined;
    clearInterval(this.quotaTimer);
    this.quotaTimer = undefined;
    await this.inbound.endPlaceholders();
    // Writes are queued in order, so saving once more waits for every pending one: the creds on
    // disk are the latest when the process exits.
    await this.auth
      ?.saveCreds()
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'could not save WhatsApp creds at shutdown'));
    this.endSocket();
  }

  /**
   * Unlinks the phone, as "Log out" on it does: WhatsApp forgets this device, the creds and keys
   * go, and the session ends as logged_out until it is linked again.
   */
  async logout(reason: string): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.watchdogTimer);
    this.watchdogTimer = undefined;
    clearInterval(this.quotaTimer);
    this.quotaTimer = undefined;
    // A socket already closed cannot tell WhatsApp; the keys go all the same, so it cannot resume.
    await this.socket?.logout().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'WhatsApp was not told of the logout'));
    this.endSocket();
    await this.auth?.clear();
    await this.report('logged_out', reason);
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
      const timer = setTimeout(() => {
        unsubscribe();
        reject(new Error('The session did not become ready to link in time.'));
      }, timeoutMs);
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

  /** For fetches to WhatsApp's servers outside Baileys (profile pictures): through the number's proxy, if any. */
  get fetchDispatcher(): ProxyRoute['dispatcher'] | undefined {
    return this.route?.dispatcher;
  }

  markTraffic(): void {
    this.lastTrafficAt = Date.now();
  }

  private async openSocket(): Promise<void> {
    this.endSocket();
    this.auth = await this.deps.loadAuthState();
    const proxy = await this.readProxy();
    // stop() may have come while the auth state loaded: no socket may outlive the session.
    if (this.stopped || proxy === false) return;
    this.route = proxy === undefined ? undefined : proxyRoute(proxy);
    const generation = ++this.generation;
    this.qrShown = false;
    const socket = this.deps.socketFactory({
      auth: this.auth.state,
      logger: this.deps.logger,
      getMessage: (id) => this.sentMessages.get(id),
      cachedGroupMetadata: (jid) => this.groups.cached(jid),
      markOnlineOnConnect: this.showOnline,
      version: this.deps.version,
      proxy: this.route,
    });
    this.socket = socket;
    const current = () => generation === this.generation && !this.stopped;
    socket.ev.on(
      'creds.update',
      () => void this.auth?.saveCreds().catch((error: unknown) => this.deps.logger.error({ err: error }, 'could not save WhatsApp creds')),
    );
    socket.ev.on('connection.update', (update) => current() && void this.onConnectionUpdate(update));
    socket.ev.on('messages.upsert', (upsert) => current() && void this.inbound.onMessages(upsert));
    socket.ev.on('messages.update', (updates) => current() && void this.inbound.onReceipts(updates));
    // A group that changed is fetched afresh when next needed; one that was just described is kept.
    socket.ev.on('groups.upsert', (groups) => {
      if (current()) for (const group of groups) this.groups.put(group);
    });
    socket.ev.on('groups.update', (updates) => {
      if (!current()) return;
      for (const update of updates) {
        if (update.id) this.groups.forget(update.id);
        this.inbound.reportGroupChanges(settingsChanges(update, new Date()));
      }
    });
    // WhatsApp tells the LID behind a phone outside messages too: the gateway keeps its own map.
    socket.ev.on('lid-mapping.update', (mapping) => current() && this.inbound.reportIdentities([identityOfMapping(mapping)], 'mapping'));
    socket.ev.on(
      'messaging-history.set',
      (history) => current() && this.inbound.reportIdentities((history.lidPnMappings ?? []).map(identityOfMapping), 'mapping'),
    );
    socket.ev.on('presence.update', (update) => current() && void this.inbound.onPresence(update));
    // WhatsApp pushes its cap on new chats as it changes (Baileys' MessageCappingInfoNotification).
    socket.ev.on('message-capping.update', (info) => current() && void this.reportQuota(mapCapInfo(info)));
    socket.ev.on('call', (calls) => {
      if (current()) this.inbound.callsHeard(calls);
    });
    socket.ev.on('group-participants.update', (update) => {
      if (!current()) return;
      this.groups.forget(update.id);
      this.inbound.reportGroupChanges(participantChanges(update, new Date()));
    });
  }

  /** The number's proxy, or false when it cannot be read: the session fails with that reason rather than connect around it. */
  private async readProxy(): Promise<ProxyUrl | undefined | false> {
    try {
      return await this.deps.loadProxy();
    } catch (error) {
      this.deps.logger.error({ err: error }, "could not read the number's proxy");
      await this.report(
        'failed',
        `the number's proxy could not be read (${(error as Error).message}); set it again, then restart the number`,
      );
      return false;
    }
  }

  private endSocket(): void {
    const socket = this.socket;
    const route = this.route;
    this.socket = undefined;
    this.route = undefined;
    this.generation += 1;
    route?.close().catch((error: unknown) => this.deps.logger.debug({ err: error }, "closing the proxy's connections failed"));
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
    await this.onTimelock(timelockNews(update));
    if (update.connection === 'open') await this.onOpen();
    if (update.connection === 'close') {
      const error = update.lastDisconnect?.error as { message?: string; output?: { statusCode?: number } } | undefined;
      const linking = this.auth?.state.creds.me === undefined;
      const proxyFailure = this.route && proxyFailureOf(error, this.route.proxy);
      const facts: DisconnectFacts = {
        statusCode: error?.output?.statusCode,
        linking,
        qrShown: this.qrShown,
        consecutiveFailures: this.consecutiveFailures,
        ...(proxyFailure && { proxy: { redacted: this.route!.proxy.redacted, failure: proxyFailure } }),
      };
      const decision = decideReconnect(facts, this.deps.timings.reconnect);
      // The code alone rarely says why ("408"); the error's own words do ("ENOTFOUND web.whatsapp.com").
      // A proxy's failure has said why already, in words that hold no part of its URL.
      const detail = proxyFailure || error?.message === undefined || error.message === '' ? '' : `: ${error.message}`;
      await this.act({ ...decision, reason: `${decision.reason}${detail}` });
    }
  }

  private async onTimelock(news: TimelockNews | undefined): Promise<void> {
    if (news === undefined) return;
    if (news.kind === 'lifted') await this.deps.events.restrictionLifted({ lease: this.deps.lease, phone: this.deps.number.phone });
    else await this.restricted('reachout_timelock', news.until, news.detail);
  }

  /**
   * Reports that WhatsApp stopped the number. After a 463 it also asks whether a reach-out time
   * lock is what stopped it: that answer, which comes back as a connection.update, carries the
   * time it lifts.
   */
  async restricted(reason: NumberRestrictedEvent['reason'], until: Date | null, detail: string | null): Promise<void> {
    await this.deps.events.numberRestricted({ lease: this.deps.lease, phone: this.deps.number.phone, reason, until, detail });
    if (reason !== 'restricted') return;
    this.socket
      ?.fetchAccountReachoutTimelock()
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'could not ask WhatsApp about a reach-out time lock'));
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
    this.renewPresenceSubscriptions();
    void this.readQuota();
  }

  /**
   * Reads WhatsApp's cap on the number's new chats and reports it; a failed query (WhatsApp
   * answers 500 for some accounts) is reported as a quota of status unknown, with its error, so
   * that the governor says it fell back to the policy's own figure. Undefined without a socket.
   */
  async readQuota(): Promise<NewChatQuota | undefined> {
    const socket = this.socket;
    if (socket === undefined) return undefined;
    const quota = await socket.fetchNewChatMessageCap().then(mapCapInfo, failedCapRead);
    if (socket === this.socket) await this.reportQuota(quota);
    return quota;
  }

  private async reportQuota(quota: NewChatQuota): Promise<void> {
    await this.deps.events
      .newChatQuota({ lease: this.deps.lease, phone: this.deps.number.phone, at: new Date(), kind: 'read', quota })
      .catch((error: unknown) => this.deps.logger.error({ err: error }, "could not record WhatsApp's new-chat quota"));
  }

  /**
   * WhatsApp refused a send with 475: the number met its cap on new chats. Reported first, so
   * that its first contacts are held by the time the refused send is answered or its receipt
   * recorded; then the quota is read again, which names the cycle's end.
   */
  async capMet(detail: string): Promise<void> {
    await this.deps.events
      .newChatQuota({ lease: this.deps.lease, phone: this.deps.number.phone, at: new Date(), kind: 'capped', detail })
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'could not record that WhatsApp capped the new chats'));
    void this.readQuota();
  }

  /** Subscribes to the contact's presence now, and again on every later connection of this session. */
  async subscribePresence(socket: { presenceSubscribe(jid: string): Promise<void> }, jid: string): Promise<void> {
    this.presenceSubscriptions.delete(jid);
    this.presenceSubscriptions.add(jid);
    // Bounded: the oldest subscriptions are the first to lapse on a reconnect.
    if (this.presenceSubscriptions.size > MAX_PRESENCE_SUBSCRIPTIONS) {
      this.presenceSubscriptions.delete(this.presenceSubscriptions.values().next().value!);
    }
    await socket.presenceSubscribe(jid);
  }

  /** One after another, not in a burst, and only while the connection that asks is this session's. */
  private renewPresenceSubscriptions(): void {
    const socket = this.socket;
    if (socket === undefined || this.presenceSubscriptions.size === 0) return;
    void (async () => {
      for (const jid of [...this.presenceSubscriptions]) {
        if (this.socket !== socket) return;
        await socket
          .presenceSubscribe(jid)
          .catch((error: unknown) =>
            this.deps.logger.warn({ err: error, jid }, 'could not renew a presence subscription after reconnecting'),
          );
      }
    })();
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
        // Whatever was waiting to leave from the number must wait for it to be linked again.
        await this.restricted('logged_out', null, decision.reason);
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
    await this.act(
      decideReconnect(
        { statusCode: undefined, linking: false, consecutiveFailures: this.consecutiveFailures },
        this.deps.timings.reconnect,
      ),
    );
  }

  /** A session that says "open" but has heard nothing for a while is asked a cheap question. */
  private async watchdog(): Promise<void> {
    const socket = this.socket;
    if (
      this.probing ||
      this.status !== 'connected' ||
      socket === undefined ||
      Date.now() - this.lastTrafficAt < this.deps.timings.watchdogIdleMs
    )
      return;
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
      const quietMinutes = Math.round((Date.now() - this.lastTrafficAt) / 60_000);
      await this.report(
        'connecting',
        `quiet session: no traffic for ${quietMinutes} min and no answer to a probe within ${this.deps.timings.probeTimeoutMs} ms; reconnecting`,
        true,
      );
      await this.openSocket();
    } finally {
      clearTimeout(timer);
      this.probing = false;
    }
  }

  async report(status: SessionStatus, reason: string | null, quietRestart = false): Promise<void> {
    const changed = status !== this.status;
    this.status = status;
    this.emitLink({ status, reason });
    if (changed || status === 'connecting')
      await this.deps.events.sessionStatusChanged({
        lease: this.deps.lease,
        phone: this.deps.number.phone,
        status,
        reason,
        ...(quietRestart && { quietRestart: true }),
      });
  }

  private emitLink(update: LinkUpdate): void {
    for (const listener of this.linkListeners) listener(update);
  }
}
