import { monotonicFactory } from 'ulid';
import { randomFraction } from '../../domain/ids.ts';
import type { StructuredContent } from '../../domain/structured-content.ts';
import { isGroupId, type Group, type GroupChange, type ParticipantResult } from '../../domain/groups.ts';
import type { E164 } from '../../domain/phone.ts';
import { SandboxGroups, type GroupOperation, type SandboxGroupArchive } from './sandbox-groups.ts';
import {
  BlockedSenderError,
  NotConnectedError,
  NotGroupMemberError,
  SendRestrictedError,
  type JournalEntry,
  type NetworkConnection,
  type NetworkDevice,
  type NetworkExtras,
  type NetworkMedia,
  type NetworkMessage,
  type NetworkReceipt,
  type NetworkRestriction,
  type SandboxNetworkPort,
} from './sandbox-network-protocol.ts';
import { handledElsewhere } from '../../domain/promises.ts';
import { HeldReceipts } from './sandbox-receipts.ts';

// The protocol's types are imported from here by the engines and the server, as before.
export * from './sandbox-network-protocol.ts';

interface LiveConnection {
  phone: string;
  node: string;
  device: NetworkDevice;
  open: boolean;
}

interface Pending {
  message: NetworkMessage;
  /** Settles the sender's wait; called at most once. */
  settle(delivered: boolean): void;
  /** The connection the message was handed to and has not yet answered for. */
  inFlightTo?: LiveConnection;
}

const nextUlid = monotonicFactory(randomFraction);
/**
 * How long a send waits for a live recipient to store the message before answering anyway,
 * unless the code that builds the network sets another (WAGW_SANDBOX_DELIVERY_WAIT_MS, or
 * GatewayBoundaries.sandboxDeliveryWaitMs in tests).
 */
export const DEFAULT_DELIVERY_WAIT_MS = 2_000;
/**
 * Messages handed to one connection before the first of them is stored. Like WhatsApp's own
 * servers, the network does not wait for each acknowledgement before sending the next: the
 * device stores them as they come, and the gateway commits them in shared batches. One at a
 * time, a number could receive no faster than one durable commit after another.
 */
const IN_FLIGHT_PER_CONNECTION = 64;
/** Journal entries a network keeps by default: enough to look at recent traffic in one process. */
const DEFAULT_JOURNAL_LIMIT = 1_000;

/**
 * The simulated WhatsApp network. Like WhatsApp, it allows one live connection per number (a
 * second one replaces the first, which hears `replaced`), keeps messages for a number that has
 * connected before until a connection of it stores them, and acknowledges delivery to the
 * sender. Phones that never connected are outside the gateway: sends to them are accepted and
 * acknowledged at once. It runs in the gateway's process by default, or shared by several nodes
 * (`wagw sandbox-network`, sandbox-network-server.ts).
 */
/** The people a phone remembers as having written to it, for the new-chat cap's rehearsal. */
const MAX_CORRESPONDENTS = 10_000;

export class SandboxNetwork implements SandboxNetworkPort {
  private readonly live = new Map<string, LiveConnection>();
  private readonly known = new Set<string>();
  private readonly waiting = new Map<string, Pending[]>();
  /** Receipts for the gateway's numbers, kept until a connection of the sender records them. */
  private readonly receipts = new HeldReceipts((phone) => this.live.get(phone));
  private readonly entries: JournalEntry[] = [];
  private readonly groups = new SandboxGroups();
  /** Numbers the network restricts, by phone, until their restriction's time. */
  private readonly restrictions = new Map<string, NetworkRestriction>();
  /** Numbers whose new chats the network caps (a rehearsal of WhatsApp's 475), with what they used of the quota. */
  private readonly caps = new Map<string, { restriction: NetworkRestriction; used: number }>();
  /** Who wrote to whom, per recipient (the latest MAX_CORRESPONDENTS): a send to one of them is no new chat. */
  private readonly correspondents = new Map<string, Set<string>>();
  /** Who blocked whom: each phone's blocked contacts. */
  private readonly blocked = new Map<string, Set<string>>();
  private seq = 0;
  private archiving: Promise<void> = Promise.resolve();

  constructor(
    private readonly onJournal?: (entry: JournalEntry) => void,
    /** The shared network keeps more, for the chaos test and the operator; it also appends them all to its file. */
    private readonly journalLimit = DEFAULT_JOURNAL_LIMIT,
    /** Where groups are kept between runs; without it they last as long as this process. */
    private readonly groupArchive?: SandboxGroupArchive,
    private readonly deliveryWaitMs = DEFAULT_DELIVERY_WAIT_MS,
  ) {}

  /** Puts back the groups an earlier run kept, before any number connects. */
  async restoreGroups(): Promise<void> {
    if (this.groupArchive !== undefined) this.groups.restore(await this.groupArchive.load());
  }

  async connect(phone: string, node: string, device: NetworkDevice): Promise<NetworkConnection> {
    const previous = this.live.get(phone);
    const connection: LiveConnection = { phone, node, device, open: true };
    this.live.set(phone, connection);
    this.known.add(phone);
    if (previous !== undefined) {
      previous.open = false;
      this.record({ kind: 'replace', phone, node: previous.node });
      previous.device.replaced();
      this.release(previous);
      this.receipts.release(phone, previous);
    }
    this.record({ kind: 'connect', phone, node });
    // Messages kept while the number was away go to the new connection, in order.
    queueMicrotask(() => {
      this.flushWaiting(phone);
      this.receipts.flush(phone);
    });
    return {
      send: (to, text, media, extras) => this.send(connection, to, text, media, extras),
      markRead: async (to, ids) => this.markRead(connection, to, ids),
      close: async () => this.close(connection),
    };
  }

  async expect(phone: string): Promise<void> {
    this.known.add(phone);
  }

  async restrict(phone: string, restriction: NetworkRestriction): Promise<void> {
    if (restriction.kind === 'new_chat_cap') {
      this.caps.set(phone, { restriction, used: 0 });
      return;
    }
    this.restrictions.set(phone, restriction);
    const connection = this.live.get(phone);
    if (restriction.kind === 'restricted' && connection?.open) connection.device.restricted?.(restriction);
  }

  /** The sender's restriction while it lasts; one whose time has passed is forgotten. */
  private restrictionOf(phone: string): NetworkRestriction | undefined {
    const restriction = this.restrictions.get(phone);
    if (restriction !== undefined && restriction.until <= Date.now()) this.restrictions.delete(phone);
    return this.restrictions.get(phone);
  }

  /**
   * A send to someone who never wrote to the sender is a new chat: while the sender's cap
   * rehearsal lasts, it takes one of the cycle's quota, and once the quota is spent it is refused
   * with 475 (SendRestrictedError of kind new_chat_cap), as WhatsApp refuses it.
   */
  private countNewChat(sender: string, to: string): void {
    const cap = this.caps.get(sender);
    if (cap === undefined) return;
    if (cap.restriction.until <= Date.now()) {
      this.caps.delete(sender);
      return;
    }
    if (this.correspondents.get(sender)?.has(to) === true) return;
    if (cap.used >= (cap.restriction.newChats ?? 0)) throw new SendRestrictedError({ ...cap.restriction, used: cap.used });
    cap.used += 1;
  }

  async createGroup(creator: string, subject: string, participants: readonly string[]): Promise<Group> {
    const group = this.groups.create(creator, subject, participants);
    await this.keep(group.id);
    const added = group.participants.map((member) => member.phone!).filter((phone) => phone !== creator);
    const change: GroupChange = {
      groupId: group.id,
      kind: 'added',
      participants: added.map((phone) => ({ phone, lid: null })),
      subject,
      actor: { phone: creator as E164, lid: null },
      at: new Date(),
    };
    this.tellMembers(added, [change]);
    return group;
  }

  async manageGroup(actor: string, id: string, operation: GroupOperation): Promise<{ results?: ParticipantResult[]; code?: string }> {
    const { changes, notify, ...answer } = this.groups.apply(actor, id, operation);
    if (operation.kind !== 'invite' || operation.revoke) await this.keep(id);
    this.tellMembers(
      notify.filter((phone) => phone !== actor),
      changes,
    );
    return answer;
  }

  /**
   * Writes the group as it is now to the archive, before the change is answered. The writes run
   * one after another, each reading the group when its turn comes, so that the last one written
   * holds the latest state whatever order concurrent changes were made in.
   */
  private keep(id: string): Promise<void> {
    const archive = this.groupArchive;
    if (archive === undefined) return Promise.resolve();
    const write = this.archiving.then(() => {
      const record = this.groups.record(id);
      return record === undefined ? archive.remove(id) : archive.save(record);
    });
    // The caller gets `write` and its failure; the queue only waits for it to settle.
    this.archiving = write.then(handledElsewhere, handledElsewhere);
    return write;
  }

  /** Tells the live devices of `phones` what changed in their group; one away learns nothing, as the network keeps no such news. */
  private tellMembers(phones: readonly string[], changes: readonly GroupChange[]): void {
    for (const phone of phones) {
      const connection = this.live.get(phone);
      if (connection?.open) for (const change of changes) connection.device.groupChanged?.(change);
    }
  }

  async groupsOf(phone: string): Promise<Group[]> {
    return this.groups.of(phone);
  }

  async groupSeenBy(phone: string, id: string): Promise<Group | undefined> {
    return this.groups.seenBy(phone, id);
  }

  async inject(
    from: string,
    to: string,
    text: string,
    media?: NetworkMedia,
    structured?: StructuredContent,
    extras?: NetworkExtras,
    inGroup?: string,
  ): Promise<{ id: string }> {
    if (this.isBlocked(to, from)) throw new BlockedSenderError(from, to);
    const message = { ...this.newMessage(from, to, text, media, extras), ...(structured !== undefined && { structured }) };
    if (inGroup !== undefined) {
      const group = this.groups.seenBy(from, inGroup);
      if (group === undefined || !group.participants.some((member) => member.phone === to))
        throw new NotGroupMemberError(group === undefined ? from : to, inGroup);
      message.group = { id: group.id, subject: group.subject };
      // The other members get theirs as a real group's would; the simulated phone waits for `to` alone.
      // A simulated LID is a claim of the account that simulates, made to its own number: the
      // other members (another account's numbers, maybe) get the message from the phone alone,
      // so that no account's LID map learns what another account asserted (issue 38, ADR 0055).
      const { senderLid: _claimedLid, phoneHidden: _claimHidden, ...unclaimed } = message;
      void this.fanOut(unclaimed, group, to);
    }
    this.record({ kind: 'send', phone: from, node: 'simulator', id: message.id, to, text });
    const delivered = await this.deliver(message, true);
    if (!delivered) throw new NotConnectedError(to);
    return { id: message.id };
  }

  async setBlocked(phone: string, contact: string, blocked: boolean): Promise<void> {
    const list = this.blocked.get(phone) ?? new Set<string>();
    if (blocked) list.add(contact);
    else list.delete(contact);
    if (list.size === 0) this.blocked.delete(phone);
    else this.blocked.set(phone, list);
  }

  async blocklistOf(phone: string): Promise<string[]> {
    return [...(this.blocked.get(phone) ?? [])];
  }

  private isBlocked(recipient: string, sender: string): boolean {
    return this.blocked.get(recipient)?.has(sender) === true;
  }

  /** Everything the network saw, oldest first (bounded to the latest entries). */
  journal(): JournalEntry[] {
    return [...this.entries];
  }

  /** Drops every connection of a node at once, as a dead node's sockets close. */
  disconnectNode(node: string): void {
    for (const connection of [...this.live.values()]) if (connection.node === node) this.close(connection);
  }

  private async send(
    connection: LiveConnection,
    to: string,
    text: string,
    readMedia?: () => Promise<NetworkMedia>,
    extras?: NetworkExtras,
  ): Promise<{ id: string }> {
    if (!connection.open) throw new NotConnectedError(connection.phone);
    const restriction = this.restrictionOf(connection.phone);
    if (restriction !== undefined) throw new SendRestrictedError(restriction);
    if (isGroupId(to)) return this.sendToGroup(connection, to, text, readMedia, extras);
    if (extras?.action === undefined) this.countNewChat(connection.phone, to);
    const media = readMedia !== undefined && this.known.has(to) ? await readMedia() : undefined;
    const message = this.newMessage(connection.phone, to, text, media, extras);
    this.record({ kind: 'send', phone: connection.phone, node: connection.node, id: message.id, to, text });
    const sender = connection.phone;
    // As on WhatsApp, a message to a phone that blocked the sender is accepted and never
    // delivered: the sender's phone shows one tick for good.
    if (this.isBlocked(to, sender)) return { id: message.id };
    if (!this.known.has(to)) {
      // A phone outside the gateway: its handset acknowledges, as on the real network (a
      // reaction, edit or revocation gets no receipt of its own there either).
      if (message.action === undefined) setImmediate(() => this.acknowledge(sender, message.id));
      return { id: message.id };
    }
    // The send waits (briefly) for a live recipient to store the message, as a device
    // acknowledges it; a recipient that is away gets it when it connects again.
    await this.deliver(message, false);
    return { id: message.id };
  }

  /**
   * A group message goes to every member but the sender, each member's device getting its own
   * copy as on WhatsApp. The send waits for the gateway's members to store theirs (briefly, as
   * for one recipient), and the sender hears one delivery receipt for the group.
   */
  private async sendToGroup(
    connection: LiveConnection,
    groupId: string,
    text: string,
    readMedia?: () => Promise<NetworkMedia>,
    extras?: NetworkExtras,
  ): Promise<{ id: string }> {
    const sender = connection.phone;
    const group = this.groups.seenBy(sender, groupId);
    if (group === undefined) throw new NotGroupMemberError(sender, groupId);
    const anyKnown = group.participants.some((member) => member.phone !== sender && this.known.has(member.phone!));
    const media = readMedia !== undefined && anyKnown ? await readMedia() : undefined;
    const message = { ...this.newMessage(sender, groupId, text, media, extras), group: { id: group.id, subject: group.subject } };
    this.record({ kind: 'send', phone: sender, node: connection.node, id: message.id, to: groupId, text });
    await this.fanOut(message, group, sender);
    if (message.action === undefined) setImmediate(() => this.acknowledge(sender, message.id));
    return { id: message.id };
  }

  /** Hands each member of the gateway but `except` its copy of a group message; phones outside need nothing. */
  private async fanOut(message: NetworkMessage, group: Group, except: string): Promise<void> {
    // A block is of direct messages only: a group's messages reach every member, as on WhatsApp.
    const copies = group.participants
      .filter((member) => member.phone !== null && member.phone !== except && member.phone !== message.from && this.known.has(member.phone))
      .map((member) => this.deliver({ ...message, to: member.phone! }, false));
    await Promise.all(copies);
  }

  /** A read mark goes to the sender as a receipt, kept like any other until the sender records it. */
  private markRead(connection: LiveConnection, to: string, ids: readonly string[]): void {
    if (!connection.open) throw new NotConnectedError(connection.phone);
    for (const id of ids) this.record({ kind: 'read', phone: connection.phone, node: connection.node, id, to });
    for (const id of ids) this.receipt(to, { id, status: 'read' });
  }

  private deliver(message: NetworkMessage, dropIfUndelivered: boolean): Promise<boolean> {
    return new Promise((resolve) => {
      let settled = false;
      const pending: Pending = {
        message,
        settle: (delivered) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(delivered);
        },
      };
      const timer = setTimeout(() => {
        if (dropIfUndelivered) this.forget(pending);
        pending.settle(false);
      }, this.deliveryWaitMs);
      const queue = this.waiting.get(message.to) ?? [];
      queue.push(pending);
      this.waiting.set(message.to, queue);
      if (queue.length <= IN_FLIGHT_PER_CONNECTION) this.flushWaiting(message.to);
    });
  }

  private forget(pending: Pending): void {
    const queue = this.waiting.get(pending.message.to);
    if (queue === undefined) return;
    const index = queue.indexOf(pending);
    // One in flight stays until its device answers; the others are dropped.
    if (index >= 0 && pending.inFlightTo === undefined) queue.splice(index, 1);
    if (queue.length === 0) this.waiting.delete(pending.message.to);
  }

  /**
   * Hands the recipient's oldest waiting messages to its live connection, in order, up to
   * IN_FLIGHT_PER_CONNECTION at once; each stored one makes room for the next. A message in
   * flight to a connection that closes goes to the next one; if both store it, the gateway
   * keeps it once (unique per WhatsApp id).
   */
  private flushWaiting(phone: string): void {
    const connection = this.live.get(phone);
    const queue = this.waiting.get(phone);
    if (connection === undefined || !connection.open || queue === undefined) return;
    // Those in flight are the oldest, at the front: the scan stops within the window.
    let inFlight = 0;
    for (const pending of queue) {
      if (inFlight >= IN_FLIGHT_PER_CONNECTION) break;
      inFlight += 1;
      if (pending.inFlightTo === undefined) this.handOver(phone, connection, pending);
    }
  }

  private handOver(phone: string, connection: LiveConnection, pending: Pending): void {
    pending.inFlightTo = connection;
    connection.device.incoming(pending.message).then(
      () => {
        const queue = this.waiting.get(phone);
        const index = queue?.indexOf(pending) ?? -1;
        if (index < 0) return;
        queue!.splice(index, 1);
        if (queue!.length === 0) this.waiting.delete(phone);
        this.record({ kind: 'deliver', phone, node: connection.node, id: pending.message.id });
        pending.settle(true);
        // A group message's sender hears one receipt for the group, when it is handed out.
        if (pending.message.from !== phone && pending.message.action === undefined && pending.message.group === undefined)
          this.acknowledge(pending.message.from, pending.message.id);
        this.flushWaiting(phone);
      },
      () => {
        // Not stored (the connection is closing, or its node could not write): kept for a later try.
        if (pending.inFlightTo !== connection) return;
        pending.inFlightTo = undefined;
        setTimeout(() => this.flushWaiting(phone), 200);
      },
    );
  }

  /** Messages in flight to a connection that is gone may go to the number's next one. */
  private release(connection: LiveConnection): void {
    for (const pending of this.waiting.get(connection.phone) ?? []) {
      if (pending.inFlightTo === connection) pending.inFlightTo = undefined;
    }
  }

  private acknowledge(sender: string, id: string): void {
    this.receipt(sender, { id, status: 'delivered' });
  }

  /**
   * A receipt for one of the gateway's numbers is kept until a connection of it records it, even
   * while the number is away or moving between nodes, as WhatsApp keeps them for an offline
   * device (ADR 0062); a phone outside the gateway has no one to tell.
   */
  private receipt(sender: string, receipt: NetworkReceipt): void {
    if (this.known.has(sender)) this.receipts.add(sender, receipt);
  }

  private close(connection: LiveConnection): void {
    if (!connection.open) return;
    connection.open = false;
    if (this.live.get(connection.phone) === connection) this.live.delete(connection.phone);
    this.record({ kind: 'disconnect', phone: connection.phone, node: connection.node });
    this.release(connection);
    this.receipts.release(connection.phone, connection);
  }

  private newMessage(from: string, to: string, text: string, media: NetworkMedia | undefined, extras?: NetworkExtras): NetworkMessage {
    // Only the gateway's numbers are capped, so only what they hear is remembered.
    if (!isGroupId(to) && this.known.has(to)) this.noteCorrespondent(to, from);
    return {
      id: `sbx_${nextUlid()}`,
      from,
      to,
      text,
      sentAt: Date.now(),
      ...(media !== undefined && { media }),
      ...(extras?.quoted !== undefined && { quoted: extras.quoted }),
      ...(extras?.action !== undefined && { action: extras.action }),
      ...(extras?.mentions !== undefined && extras.mentions.length > 0 && { mentions: [...extras.mentions] }),
      ...(extras?.senderLid !== undefined && { senderLid: extras.senderLid, phoneHidden: extras.phoneHidden === true }),
      ...(extras?.structured !== undefined && { structured: extras.structured }),
      ...(extras?.referral !== undefined && { referral: extras.referral }),
      ...(extras?.unavailable === true && { unavailable: true }),
    };
  }

  /** `from` wrote to `to`; each phone keeps its latest MAX_CORRESPONDENTS, so a long rehearsal stays bounded. */
  private noteCorrespondent(to: string, from: string): void {
    const known = this.correspondents.get(to) ?? new Set<string>();
    known.delete(from);
    known.add(from);
    if (known.size > MAX_CORRESPONDENTS) known.delete(known.values().next().value!);
    this.correspondents.set(to, known);
  }

  private record(entry: Omit<JournalEntry, 'seq' | 'at'>): void {
    const full: JournalEntry = { seq: ++this.seq, at: Date.now(), ...entry };
    this.entries.push(full);
    // Trimmed in chunks, so that a full journal does not shift its array on every entry.
    if (this.entries.length > this.journalLimit * 1.1) this.entries.splice(0, this.entries.length - this.journalLimit);
    this.onJournal?.(full);
  }
}
