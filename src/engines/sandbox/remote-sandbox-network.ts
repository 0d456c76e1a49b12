import net from 'node:net';
import type { Logger } from 'pino';
import type { StructuredContent } from '../../domain/structured-content.ts';
import type { Group, GroupChange, ParticipantResult } from '../../domain/groups.ts';
import { LineSplitter } from './line-splitter.ts';
import {
  networkRestriction,
  NetworkUnreachableError,
  parseProtocolLine,
  SendRestrictedError,
  type NetworkRestriction,
} from './sandbox-network-protocol.ts';
import {
  HANDSHAKE_LINE_BYTES,
  HANDSHAKE_TIMEOUT_MS,
  handshakeProof,
  isNonce,
  newNonce,
  proofMatches,
} from './sandbox-network-handshake.ts';
import { GroupRefusedError, type GroupOperation } from './sandbox-groups.ts';
import {
  BlockedSenderError,
  NotConnectedError,
  NotGroupMemberError,
  type JournalEntry,
  type NetworkConnection,
  type NetworkDevice,
  type NetworkExtras,
  type NetworkMedia,
  type NetworkMessage,
  type SandboxNetworkPort,
} from './sandbox-network.ts';

/** Where the shared network listens, the handshake key it expects, and the longest line either side may send. */
export interface SharedNetworkAddress {
  host: string;
  port: number;
  key: Buffer;
  maxLineBytes: number;
}

/** A number's connection as this node made it: the socket it lives on, and whether the network took it. */
interface LocalConnection {
  id: number;
  device: NetworkDevice;
  socket: net.Socket;
  established: boolean;
}

/** How long to wait before dialling the shared network again after the socket closed. */
const REDIAL_MS = 500;

/**
 * A node's side of the shared sandbox network (sandbox-network-server.ts): one TCP socket for
 * all of the node's numbers. If the socket drops, every number's connection is gone, as the
 * network sees it; the devices hear `replaced` so their sessions report it, and the lease
 * keeper's next start of each number connects it again.
 */
export class RemoteSandboxNetwork implements SandboxNetworkPort {
  private socket: net.Socket | undefined;
  private connecting: Promise<net.Socket> | undefined;
  private nextRef = 0;
  private readonly pending = new Map<number, { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void }>();
  private nextConnection = 0;
  /** Each number's latest connection from this node; only its device hears what the network pushes. */
  private readonly devices = new Map<string, LocalConnection>();

  constructor(
    private readonly address: SharedNetworkAddress,
    private readonly logger?: Logger,
  ) {}

  async connect(phone: string, node: string, device: NetworkDevice): Promise<NetworkConnection> {
    const socket = await this.dial();
    // Known before the network answers, as the messages kept for the number may come first.
    const local: LocalConnection = { id: ++this.nextConnection, device, socket, established: false };
    this.devices.set(phone, local);
    try {
      await this.requestOn(socket, { op: 'connect', phone, node, connection: local.id });
    } catch (error) {
      // A connection that never was must not be told it was lost: its caller retries it, and a
      // second retry started by the loss would race the first (issue 26, item 1).
      if (this.devices.get(phone) === local) this.devices.delete(phone);
      throw error;
    }
    local.established = true;
    return {
      send: async (to, text, readMedia, extras) => {
        // The shared network decides who is in the sandbox, so the bytes travel with the send.
        const media = readMedia === undefined ? undefined : await readMedia();
        const answer = await this.request({ op: 'send', phone, to, text, media, ...extras });
        return { id: String(answer.id) };
      },
      markRead: async (to, ids) => {
        await this.request({ op: 'read', phone, to, ids });
      },
      close: async () => {
        if (this.devices.get(phone) !== local) return;
        this.devices.delete(phone);
        // The network drops a device whose connection ends, so a disconnect it did not hear loses nothing.
        await this.request({ op: 'disconnect', phone }).catch((error: unknown) =>
          this.logger?.debug({ err: error, phone }, 'the shared sandbox network did not hear a disconnect'),
        );
      },
    };
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
    const answer = await this.request({ op: 'inject', from, to, text, media, structured, ...extras, in_group: inGroup });
    return { id: String(answer.id) };
  }

  async expect(phone: string): Promise<void> {
    await this.request({ op: 'expect', phone });
  }

  async restrict(phone: string, restriction: NetworkRestriction): Promise<void> {
    await this.request({ op: 'restrict', phone, ...restriction });
  }

  async createGroup(creator: string, subject: string, participants: readonly string[]): Promise<Group> {
    return (await this.request({ op: 'group_create', phone: creator, subject, participants })).group as Group;
  }

  async groupsOf(phone: string): Promise<Group[]> {
    return (await this.request({ op: 'groups_of', phone })).groups as Group[];
  }

  async manageGroup(actor: string, id: string, operation: GroupOperation): Promise<{ results?: ParticipantResult[]; code?: string }> {
    const answer = await this.request({ op: 'group_manage', phone: actor, id, operation });
    return {
      ...(answer.results !== undefined && { results: answer.results as ParticipantResult[] }),
      ...(typeof answer.code === 'string' && { code: answer.code }),
    };
  }

  async groupSeenBy(phone: string, id: string): Promise<Group | undefined> {
    return ((await this.request({ op: 'group_seen_by', phone, id })).group ?? undefined) as Group | undefined;
  }

  async setBlocked(phone: string, contact: string, blocked: boolean): Promise<void> {
    await this.request({ op: 'block', phone, contact, blocked });
  }

  async blocklistOf(phone: string): Promise<string[]> {
    const answer = await this.request({ op: 'blocklist', phone });
    return Array.isArray(answer.phones) ? answer.phones.map(String) : [];
  }

  async journal(): Promise<JournalEntry[]> {
    return (await this.request({ op: 'journal' })).entries as JournalEntry[];
  }

  close(): void {
    this.socket?.destroy();
  }

  private async request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.requestOn(await this.dial(), body);
  }

  /** A request on this very socket: a connection must live on the socket whose loss it will hear of. */
  private requestOn(socket: net.Socket, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (socket.destroyed) return Promise.reject(new NetworkUnreachableError('the connection to the shared sandbox network closed', false));
    const ref = ++this.nextRef;
    return new Promise((resolve, reject) => {
      this.pending.set(ref, {
        resolve: (answer) => (answer.error === undefined ? resolve(answer) : reject(remoteError(answer, body))),
        reject,
      });
      socket.write(`${JSON.stringify({ ...body, ref })}\n`);
    });
  }

  private dial(): Promise<net.Socket> {
    if (this.socket !== undefined && !this.socket.destroyed) return Promise.resolve(this.socket);
    this.connecting ??= this.openSocket().then(
      (socket) => {
        this.socket = socket;
        this.connecting = undefined;
        return socket;
      },
      async (error: unknown) => {
        this.connecting = undefined;
        await new Promise((resolve) => setTimeout(resolve, REDIAL_MS));
        throw error;
      },
    );
    return this.connecting;
  }

  /** A socket to the network once both sides have proved they hold the key (sandbox-network-handshake.ts). */
  private openSocket(): Promise<net.Socket> {
    const where = `tcp://${this.address.host}:${this.address.port}`;
    return new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: this.address.host, port: this.address.port });
      socket.setNoDelay(true);
      const nodeNonce = newNonce();
      let admitted = false;
      let challenge: string | undefined;
      const refuse = (reason: string) => {
        reject(new NetworkUnreachableError(`The shared sandbox network at ${where} ${reason}`, false));
        socket.destroy();
      };
      const deadline = setTimeout(() => refuse('did not complete the handshake in time.'), HANDSHAKE_TIMEOUT_MS);
      const lines = new LineSplitter(
        HANDSHAKE_LINE_BYTES,
        (line) => {
          if (admitted) return this.onLine(line, socket);
          const message = parseProtocolLine(line) ?? {};
          if (message.op === 'challenge' && isNonce(message.nonce) && challenge === undefined) {
            challenge = message.nonce;
            socket.write(
              `${JSON.stringify({ op: 'hello', nonce: nodeNonce, proof: handshakeProof(this.address.key, 'node', message.nonce, nodeNonce) })}\n`,
            );
          } else if (
            message.op === 'welcome' &&
            challenge !== undefined &&
            proofMatches(handshakeProof(this.address.key, 'network', challenge, nodeNonce), message.proof)
          ) {
            admitted = true;
            clearTimeout(deadline);
            lines.maxLineBytes = this.address.maxLineBytes;
            resolve(socket);
          } else {
            refuse('did not prove that it holds WAGW_SECRET_KEY.');
          }
        },
        () => refuse(`sent a line longer than ${lines.maxLineBytes} bytes.`),
      );
      socket.on('data', (chunk: Buffer) => lines.push(chunk));
      socket.on('error', (error) => refuse(`cannot be reached: ${error.message}`));
      socket.on('close', () => {
        clearTimeout(deadline);
        lines.stop();
        // Closed before the welcome: the network refused this node's proof, or went away.
        if (!admitted)
          refuse('closed the connection during the handshake: WAGW_SECRET_KEY must be the same on the network and on every node.');
        this.onClose(socket);
      });
    });
  }

  private onLine(line: string, socket: net.Socket): void {
    const message = parseProtocolLine(line);
    if (message === undefined) return void socket.destroy();
    if (message.ref !== undefined) {
      const waiter = this.pending.get(Number(message.ref));
      this.pending.delete(Number(message.ref));
      waiter?.resolve(message);
      return;
    }
    const local = this.devices.get(String(message.phone));
    const device = local?.device;
    if (message.op === 'incoming') {
      const incoming = message.message as NetworkMessage;
      // Either answer lets the network move on: `stored` forgets the message, `not_stored` hands it over again shortly.
      const answer = (op: 'stored' | 'not_stored') => !socket.destroyed && socket.write(`${JSON.stringify({ op, id: incoming.id })}\n`);
      if (device === undefined) return void answer('not_stored');
      device.incoming(incoming).then(
        () => answer('stored'),
        (error: unknown) => {
          this.logger?.warn({ err: error, id: incoming.id }, 'could not store a sandbox message; the network hands it over again');
          answer('not_stored');
        },
      );
    } else if (message.op === 'receipt') {
      // Either answer lets the network move on: a receipt not recorded is handed over again, here or to the number's next node.
      const answer = (op: 'receipt_recorded' | 'receipt_not_recorded') =>
        !socket.destroyed && socket.write(`${JSON.stringify({ op, receipt: message.receipt })}\n`);
      if (device === undefined) return void answer('receipt_not_recorded');
      Promise.resolve()
        .then(() => device.receipt({ id: String(message.id), status: message.status === 'read' ? 'read' : 'delivered' }))
        .then(
          () => answer('receipt_recorded'),
          (error: unknown) => {
            this.logger?.debug({ err: error, id: message.id }, 'could not record a sandbox receipt; the network hands it over again');
            answer('receipt_not_recorded');
          },
        );
    } else if (message.op === 'group_changed') {
      const change = message.change as GroupChange;
      device?.groupChanged?.({ ...change, at: new Date(change.at) });
    } else if (message.op === 'restricted') {
      device?.restricted?.(networkRestriction(message));
    } else if (message.op === 'replaced') {
      // A connection this node has itself superseded (a session connecting again) was replaced by its successor: nothing to tell.
      if (local === undefined || local.id !== message.connection) return;
      this.devices.delete(String(message.phone));
      local.device.replaced();
    }
  }

  private onClose(socket: net.Socket): void {
    if (this.socket === socket) this.socket = undefined;
    for (const waiter of this.pending.values())
      waiter.reject(new NetworkUnreachableError('the connection to the shared sandbox network closed', true));
    this.pending.clear();
    const lost: NetworkDevice[] = [];
    for (const [phone, local] of this.devices) {
      if (local.socket !== socket) continue;
      this.devices.delete(phone);
      if (local.established) lost.push(local.device);
    }
    for (const device of lost) device.lost?.();
  }
}

/** The network's refusal as the in-process network would have thrown it. */
function remoteError(answer: Record<string, unknown>, body: Record<string, unknown>): Error {
  if (answer.error === 'NotConnectedError') return new NotConnectedError(String(body.phone ?? body.to));
  if (answer.error === 'SendRestrictedError') return new SendRestrictedError(networkRestriction(answer));
  if (answer.error === 'GroupRefusedError')
    return new GroupRefusedError(answer.reason === 'not_admin' ? 'not_admin' : 'not_member', String(answer.message));
  if (answer.error === 'BlockedSenderError') return Object.assign(new BlockedSenderError('', ''), { message: String(answer.message) });
  if (answer.error === 'NotGroupMemberError') return Object.assign(new NotGroupMemberError('', ''), { message: String(answer.message) });
  return new Error(String(answer.message));
}
