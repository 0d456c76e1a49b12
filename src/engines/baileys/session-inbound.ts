import type { BaileysEventMap, Contact, WACallEvent, WAMessage, WAMessageUpdate } from 'baileys';
import { downloadMediaMessage, jidDecode, jidNormalizedUser } from 'baileys';
import type { Logger } from 'pino';
import type { GroupChange } from '../../domain/groups.ts';
import type { IdentitySource } from '../../domain/identities.ts';
import type { SessionLease, WhatsAppNumber } from '../../domain/model.ts';
import { parseE164, type E164 } from '../../domain/phone.ts';
import type { IncomingMedia } from '../engine.ts';
import type { EngineEvents, NumberRestrictedEvent } from '../engine-events.ts';
import { mapCallEvent } from './call-mapper.ts';
import { NEW_CHAT_CAPPED_CODE } from './capping-mapper.ts';
import type { GroupMetadataCache } from './group-metadata-cache.ts';
import { mentionedMembers } from './group-mapper.ts';
import type { LearnedIdentity } from './identity-mapper.ts';
import {
  lidNeedingLookup,
  mapIncomingMessage,
  mapUnreadableMessage,
  placeholderId,
  type InboundDecision,
  type InboundMedia,
  type LidResolver,
} from './inbound-mapper.ts';
import { retryTokenOf } from './media-retry-token.ts';
import { mapReceiptUpdate } from './outbound-mapper.ts';
import { PlaceholderWaits } from './placeholder-waits.ts';
import { openPollVote } from './poll-votes.ts';
import { mapPresenceUpdate } from './presence-mapper.ts';
import type { ProxyRoute } from './proxy-route.ts';
import { ACCOUNT_RESTRICTED_CODE } from './restrictions.ts';
import type { SessionSocket } from './session-socket.ts';

// What a Baileys session's socket hears, reported as the gateway's events: messages (with their
// placeholders, votes and actions), receipts, calls, presences, group changes and identities.
// The session (baileys-session.ts) owns the socket and its lifecycle; this side only listens
// through it, and the pure mappers decide what each event means.

/** Calls the gateway rejected whose echo from WhatsApp is not reported again; the oldest are forgotten first. */
const MAX_REJECTED_CALLS_KEPT = 256;

/** The number and where its events go. */
export interface InboundDependencies {
  number: WhatsAppNumber;
  lease: SessionLease;
  events: EngineEvents;
  logger: Logger;
}

/** What the inbound side reads of its session, which holds the socket and reconnects it. */
export interface InboundSession {
  /** The current socket; undefined between sockets. */
  socket(): SessionSocket | undefined;
  /** The current socket's way out through the number's proxy, for downloads. */
  dispatcher(): ProxyRoute['dispatcher'] | undefined;
  /** Our own account as the creds name it, once linked. */
  me(): Contact | undefined;
  markTraffic(): void;
  readonly groups: GroupMetadataCache;
  capMet(detail: string): Promise<void>;
  restricted(reason: NumberRestrictedEvent['reason'], until: Date | null, detail: string | null): Promise<void>;
}

export class SessionInbound {
  /** Calls this session rejected: WhatsApp's own word of the rejection (and the hang-up after it) is not news. */
  private readonly rejectedCalls = new Set<string>();
  /** Call updates are reported one after another, so that a call's offer is recorded before its end. */
  private callsReported: Promise<void> = Promise.resolve();
  /** Placeholders waiting for the copy Baileys asked the sender's phone for (ADR 0051). */
  private readonly placeholders: PlaceholderWaits;

  constructor(
    private readonly deps: InboundDependencies,
    placeholderWaitMs: number,
    private readonly session: InboundSession,
  ) {
    this.placeholders = new PlaceholderWaits(placeholderWaitMs, (stub) => void this.reportUnreadable(stub));
  }

  /** Ends every placeholder's wait, reporting each as a message that could not be read. */
  async endPlaceholders(): Promise<void> {
    await Promise.all(this.placeholders.endAll().map((stub) => this.reportUnreadable(stub)));
  }

  /** Reports a socket's call updates after those heard before them. */
  callsHeard(calls: WACallEvent[]): void {
    this.callsReported = this.callsReported.then(() => this.onCalls(calls));
  }

  async onMessages(upsert: BaileysEventMap['messages.upsert']): Promise<void> {
    this.session.markTraffic();
    // History and appends are old news; only `notify` is a message arriving now.
    if (upsert.type !== 'notify') return;
    for (const message of upsert.messages) await this.receive(message);
  }

  private async receive(message: WAMessage): Promise<void> {
    // The first message after an ad often comes without its content; Baileys asks the phone for it
    // again, and the copy arrives as a message of its own with the same id.
    const placeholder = placeholderId(message);
    if (placeholder !== undefined) return this.placeholders.hold(placeholder, message);
    this.placeholders.settle(message.key.id);
    const decision = mapIncomingMessage(message, await this.lidResolver(message));
    if (decision.kind === 'skip') {
      this.deps.logger.debug({ reason: decision.reason, id: message.key.id }, 'skipped an incoming WhatsApp message');
      return;
    }
    if (decision.kind === 'poll_vote') {
      const { vote, creatorJids, voterJids, pollEngineId } = decision;
      // Our own number may have made the poll, under its phone or its LID.
      const ours = [this.session.socket()?.user?.id, this.session.socket()?.user?.lid, this.session.me()?.id, this.session.me()?.lid]
        .filter((jid): jid is string => typeof jid === 'string')
        .map((jid) => jidNormalizedUser(jid));
      await this.deps.events.pollVote({
        toPhone: this.deps.number.phone,
        voterPhone: decision.fromPhone,
        voterLid: decision.fromLid,
        pollEngineId,
        at: decision.timestamp ?? new Date(),
        ...(decision.groupId !== null && { groupId: decision.groupId }),
        selectedOptions: (poll) =>
          poll.secret === null
            ? undefined
            : openPollVote(
                vote,
                { pollEngineId, secret: poll.secret, options: poll.options },
                [...new Set([...ours, ...creatorJids])],
                voterJids,
              ),
      });
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
    await this.reportMessage(message, decision);
  }

  private async reportMessage(message: WAMessage, decision: Extract<InboundDecision, { kind: 'message' }>): Promise<void> {
    const group = decision.groupId === null ? undefined : { id: decision.groupId, subject: await this.groupSubject(decision.groupId) };
    const mentions =
      decision.groupId === null ? [] : mentionedMembers(this.session.groups.cached(decision.groupId), decision.mentionedJids);
    await this.deps.events.incomingMessage({
      toPhone: this.deps.number.phone,
      fromPhone: decision.fromPhone,
      fromLid: decision.fromLid,
      ...(message.pushName && { senderName: message.pushName }),
      contentKind: decision.contentKind,
      text: decision.text,
      ...(decision.media !== null && { media: this.downloadable(message, decision.media) }),
      ...(decision.structured !== null && { structured: decision.structured }),
      ...(decision.pollSecret !== null && { pollSecret: decision.pollSecret }),
      engineMessageId: decision.engineMessageId,
      receivedAt: decision.timestamp ?? new Date(),
      ...(decision.quotedEngineId !== null && { quotedEngineId: decision.quotedEngineId }),
      ...(group !== undefined && { group, mentions }),
      ...(decision.referral !== null && { referral: decision.referral }),
    });
  }

  /** A placeholder whose copy never came, reported as a message that could not be read, so a business can follow up. */
  private async reportUnreadable(stub: WAMessage): Promise<void> {
    const decision = mapUnreadableMessage(stub, await this.lidResolver(stub));
    if (decision.kind !== 'message') return;
    this.deps.logger.warn({ id: stub.key.id }, "the sender's phone never sent a placeholder message again; reporting it unavailable");
    await this.reportMessage(stub, decision).catch((error: unknown) =>
      this.deps.logger.error({ err: error }, 'could not record a message that never arrived'),
    );
  }

  /** Baileys' LID store's answer for a LID-only sender, read before the pure mapper runs. */
  private async lidResolver(message: WAMessage): Promise<LidResolver> {
    const lid = lidNeedingLookup(message);
    const phoneJid =
      lid === undefined
        ? undefined
        : await this.session
            .socket()
            ?.signalRepository.lidMapping.getPNForLID(lid)
            .catch(() => null);
    return () => phoneJid ?? undefined;
  }

  /** Hands identities to the gateway's map; a failure to record them loses nothing WhatsApp will not tell again. */
  reportIdentities(identities: readonly (LearnedIdentity | undefined)[], source: IdentitySource): void {
    const known = identities.filter((identity): identity is LearnedIdentity => identity !== undefined);
    if (known.length === 0) return;
    this.deps.events
      .identitiesLearned({ toPhone: this.deps.number.phone, identities: known, source })
      .catch((error: unknown) => this.deps.logger.error({ err: error }, 'could not record LID mappings'));
  }

  /** Remembers a call the gateway rejected, so that WhatsApp's echo of it is not reported as news. */
  noteRejectedCall(callId: string): void {
    this.rejectedCalls.add(callId);
    while (this.rejectedCalls.size > MAX_REJECTED_CALLS_KEPT) this.rejectedCalls.delete(this.rejectedCalls.values().next().value!);
  }

  async onCalls(calls: WACallEvent[]): Promise<void> {
    this.session.markTraffic();
    for (const update of calls) {
      const call = mapCallEvent(update);
      if (call === undefined || (this.rejectedCalls.has(call.call.callId) && call.status !== 'offered')) continue;
      const fromPhone = call.fromPhone ?? (await this.phoneOfLid(call.fromLid));
      await this.deps.events
        .incomingCall({ ...call, fromPhone, toPhone: this.deps.number.phone })
        .catch((error: unknown) => this.deps.logger.error({ err: error, callId: call.call.callId }, 'could not report a call'));
    }
  }

  async onPresence(update: BaileysEventMap['presence.update']): Promise<void> {
    this.session.markTraffic();
    for (const presence of mapPresenceUpdate(update, new Date())) {
      const contactPhone = presence.contactPhone ?? (await this.phoneOfLid(presence.contactLid));
      await this.deps.events
        .presenceUpdate({ ...presence, contactPhone, toPhone: this.deps.number.phone })
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'could not report a presence'));
    }
  }

  /** A LID's phone from Baileys' LID mapping store, where it knows it. */
  async phoneOfLid(lid: string | null): Promise<E164 | null> {
    if (lid === null) return null;
    const phoneJid = await this.session
      .socket()
      ?.signalRepository.lidMapping.getPNForLID(lid)
      .catch(() => null);
    const digits = phoneJid ? jidDecode(phoneJid)?.user : undefined;
    return digits === undefined ? null : (parseE164(`+${digits}`) ?? null);
  }

  reportGroupChanges(changes: readonly GroupChange[]): void {
    for (const change of changes) {
      this.deps.events
        .groupChanged({ ...change, toPhone: this.deps.number.phone })
        .catch((error: unknown) => this.deps.logger.error({ err: error, group: change.groupId }, 'could not record a group change'));
    }
  }

  /** A group's subject from the session's cache, fetched once when missing; null if WhatsApp will not say. */
  private async groupSubject(groupId: string): Promise<string | null> {
    const socket = this.session.socket();
    if (socket === undefined) return this.session.groups.cached(groupId)?.subject ?? null;
    return this.session.groups
      .get(groupId, (jid) => socket.groupMetadata(jid))
      .then(
        (metadata) => metadata.subject,
        () => null,
      );
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
    const socket = this.session.socket();
    const dispatcher = this.session.dispatcher();
    const stream = await downloadMediaMessage(message, 'stream', dispatcher === undefined ? {} : { options: { dispatcher } }, {
      logger: this.deps.logger.child({ component: 'baileys-media' }, { level: 'warn' }),
      reuploadRequest: (stale: WAMessage) =>
        socket === undefined ? Promise.reject(new Error('the session closed')) : socket.updateMediaMessage(stale),
    });
    return stream as AsyncIterable<Buffer>;
  }

  async onReceipts(updates: WAMessageUpdate[]): Promise<void> {
    this.session.markTraffic();
    for (const update of updates) {
      const receipt = mapReceiptUpdate(update);
      // `sent` is already what the send answered; only later news is worth an event.
      if (receipt === undefined || receipt.status === 'sent') continue;
      if (receipt.errorCode === NEW_CHAT_CAPPED_CODE)
        await this.session.capMet(`WhatsApp refused message ${receipt.engineMessageId} with 475 (new-chat cap)`);
      await this.deps.events.receipt({
        lease: this.deps.lease,
        phone: this.deps.number.phone,
        engineMessageId: receipt.engineMessageId,
        status: receipt.status,
        errorCode: receipt.errorCode ?? null,
        at: new Date(),
      });
      // WhatsApp's ack of a send from a restricted account arrives as a failed receipt with 463.
      if (receipt.errorCode === ACCOUNT_RESTRICTED_CODE)
        await this.session.restricted(
          'restricted',
          null,
          `WhatsApp refused message ${receipt.engineMessageId} with 463 (account restricted)`,
        );
    }
  }
}
