import fs from 'node:fs';
import { adReferral } from '../../domain/referral.ts';
import net from 'node:net';
import type { StructuredContent } from '../../domain/structured-content.ts';
import { fileGroupArchive } from './sandbox-group-file.ts';
import {
  HANDSHAKE_LINE_BYTES,
  HANDSHAKE_TIMEOUT_MS,
  handshakeProof,
  isNonce,
  newNonce,
  proofMatches,
} from './sandbox-network-handshake.ts';
import { LineSplitter } from './line-splitter.ts';
import { networkRestriction, parseProtocolLine, SendRestrictedError } from './sandbox-network-protocol.ts';
import { GroupRefusedError, type GroupOperation } from './sandbox-groups.ts';
import {
  SandboxNetwork,
  type JournalEntry,
  type NetworkConnection,
  type NetworkExtras,
  type NetworkMedia,
  type NetworkMessage,
} from './sandbox-network.ts';

export interface SandboxNetworkServerOptions {
  host: string;
  port: number;
  /** The handshake key every node must prove it holds (deriveSandboxNetworkKey). */
  key: Buffer;
  /** The longest line an admitted node may send: a message with its file, base64, in JSON. */
  maxLineBytes: number;
  journalFile?: string;
  groupsFile?: string;
}

/** Entries the shared network answers a `journal` request with: the latest ones. */
const SHARED_JOURNAL_LIMIT = 500_000;

/**
 * One simulated network that every node of a cluster shares (`wagw sandbox-network`), over TCP
 * with one JSON object per line. A node keeps one socket and multiplexes its numbers on it; when
 * the socket closes (a node killed, say) every connection of that node closes with it, as a
 * dead phone's do. The network records every connection, replacement and send with its node,
 * appended to `journalFile` when given and answered to a `journal` request. Its groups are kept
 * in `groupsFile` when given, so that they outlive a restart of the network (ADR 0024).
 *
 * Nothing is said before the handshake (sandbox-network-handshake.ts): the network sends
 * challenge {nonce}, the node answers hello {nonce, proof}, the network answers welcome {proof}.
 * A peer without the key gets nothing but the challenge, and no line may exceed `maxLineBytes`.
 *
 * Requests carry `ref` and are answered with the same `ref`:
 *   connect {phone, node, connection} · disconnect {phone} · send {phone, to, text, media?} ·
 *   inject {from, to, text, media?, structured?, in_group?} ·
 *   stored {id} (the node has stored incoming message id) · not_stored {id} (it could not; the
 *   network hands the message over again) · receipt_recorded {receipt} · receipt_not_recorded {receipt}
 *   (the same for a receipt, by the number its push carried) · journal {} · restrict {phone, kind, until}
 * Pushed to the node: incoming {phone, message} · receipt {phone, receipt, id, status} · replaced {phone, connection} ·
 *   restricted {phone, kind, until}
 * A send refused by a restriction is answered {error: "SendRestrictedError", kind, until}.
 */
export async function serveSandboxNetwork(options: SandboxNetworkServerOptions): Promise<{ port: number; close(): Promise<void> }> {
  const groupArchive = options.groupsFile === undefined ? undefined : fileGroupArchive(options.groupsFile);
  // Each entry is written before the network answers what it records, so that a send it acknowledged
  // is in the file however the network ends. A buffered stream lost its tail on a stop: the process
  // exited before the stream had flushed, and a send answered 200 was missing from the journal.
  let journalFd = options.journalFile === undefined ? undefined : fs.openSync(options.journalFile, 'a');
  // What the network records after its stop (its sockets' ends) is not written.
  const closeJournal = () => {
    if (journalFd !== undefined) fs.closeSync(journalFd);
    journalFd = undefined;
  };
  const network = new SandboxNetwork(
    (entry: JournalEntry) => {
      if (journalFd !== undefined) fs.writeSync(journalFd, `${JSON.stringify(entry)}\n`);
    },
    SHARED_JOURNAL_LIMIT,
    groupArchive,
  );
  // Before any node connects, so that its numbers find their groups from the first request.
  await network.restoreGroups().catch((error: unknown) => {
    closeJournal();
    throw error;
  });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    admitNode(socket, options, (push) => serveNode(socket, network, push));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          closeJournal();
          resolve();
        });
      }),
  };
}

/**
 * Speaks to a socket only once its peer has proved that it holds the cluster's key: the network
 * sends a challenge, and anything but a correct answer within the deadline, or a line longer than
 * a handshake needs, closes the socket without a word. Only then may lines grow to
 * `maxLineBytes`, and requests reach `serve`.
 */
function admitNode(
  socket: net.Socket,
  options: { key: Buffer; maxLineBytes: number },
  serve: (push: (message: object) => void) => (request: Record<string, unknown>) => void,
): void {
  const push = (message: object) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
  };
  const challenge = newNonce();
  let handle: ((request: Record<string, unknown>) => void) | undefined;
  const deadline = setTimeout(() => socket.destroy(), HANDSHAKE_TIMEOUT_MS);
  const lines = new LineSplitter(
    HANDSHAKE_LINE_BYTES,
    (line) => {
      const request = parseProtocolLine(line);
      if (request === undefined) return socket.destroy();
      if (handle !== undefined) return handle(request);
      if (
        request.op !== 'hello' ||
        !isNonce(request.nonce) ||
        !proofMatches(handshakeProof(options.key, 'node', challenge, request.nonce), request.proof)
      )
        return socket.destroy();
      clearTimeout(deadline);
      lines.maxLineBytes = options.maxLineBytes;
      push({ op: 'welcome', proof: handshakeProof(options.key, 'network', challenge, request.nonce) });
      handle = serve(push);
    },
    () => socket.destroy(),
  );
  socket.on('data', (chunk: Buffer) => lines.push(chunk));
  socket.on('close', () => {
    clearTimeout(deadline);
    lines.stop();
  });
  push({ op: 'challenge', nonce: challenge });
}

/** One admitted node's requests: its numbers' connections, and the messages they have yet to store. */
function serveNode(
  socket: net.Socket,
  network: SandboxNetwork,
  push: (message: object) => void,
): (request: Record<string, unknown>) => void {
  const node: NodeState = { connections: new Map(), awaitingStore: new Map(), awaitingReceipt: new Map(), receiptRefs: 0, push };
  socket.on('close', () => {
    for (const connection of node.connections.values()) void connection.close();
    node.connections.clear();
    for (const waiter of [...node.awaitingStore.values(), ...node.awaitingReceipt.values()]) waiter.reject(new Error('the node went away'));
    node.awaitingStore.clear();
    node.awaitingReceipt.clear();
  });
  return (request) =>
    void handleRequest(network, node, request).catch((error: unknown) =>
      answer(node, request.ref, {
        error: error instanceof Error ? error.name : 'Error',
        message: error instanceof Error ? error.message : String(error),
        ...(error instanceof GroupRefusedError && { reason: error.reason }),
        ...(error instanceof SendRestrictedError && error.restriction),
      }),
    );
}

interface NodeState {
  connections: Map<string, NetworkConnection>;
  awaitingStore: Map<string, { resolve: () => void; reject: (error: Error) => void }>;
  /** Receipts pushed to the node and not yet answered for, by the number each push carried. */
  awaitingReceipt: Map<number, { resolve: () => void; reject: (error: Error) => void }>;
  receiptRefs: number;
  push(message: object): void;
}

function answer(node: NodeState, ref: unknown, body: object): void {
  node.push({ ref, ...body });
}

async function handleRequest(network: SandboxNetwork, node: NodeState, request: Record<string, unknown>): Promise<void> {
  const phone = String(request.phone ?? '');
  switch (request.op) {
    case 'connect': {
      // The node's own name for this connection, so that it can tell which one was replaced.
      const connectionId = request.connection;
      const connection: NetworkConnection = await network.connect(phone, String(request.node), {
        incoming: (message: NetworkMessage) =>
          new Promise<void>((resolve, reject) => {
            node.awaitingStore.set(message.id, { resolve, reject });
            node.push({ op: 'incoming', phone, message });
          }),
        receipt: (receipt) =>
          new Promise<void>((resolve, reject) => {
            const ref = ++node.receiptRefs;
            node.awaitingReceipt.set(ref, { resolve, reject });
            node.push({ op: 'receipt', phone, receipt: ref, ...receipt });
          }),
        groupChanged: (change) => node.push({ op: 'group_changed', phone, change }),
        restricted: (restriction) => node.push({ op: 'restricted', phone, ...restriction }),
        replaced: () => {
          if (node.connections.get(phone) === connection) node.connections.delete(phone);
          node.push({ op: 'replaced', phone, connection: connectionId });
        },
      });
      node.connections.set(phone, connection);
      return answer(node, request.ref, { ok: true });
    }
    case 'disconnect':
      await node.connections.get(phone)?.close();
      node.connections.delete(phone);
      return answer(node, request.ref, { ok: true });
    case 'send': {
      const connection = node.connections.get(phone);
      if (connection === undefined)
        return answer(node, request.ref, {
          error: 'NotConnectedError',
          message: `${phone} has no live connection to the sandbox network.`,
        });
      return answer(
        node,
        request.ref,
        await connection.send(String(request.to), String(request.text), carried(networkMedia(request.media)), networkExtras(request)),
      );
    }
    case 'read': {
      const connection = node.connections.get(phone);
      if (connection === undefined)
        return answer(node, request.ref, {
          error: 'NotConnectedError',
          message: `${phone} has no live connection to the sandbox network.`,
        });
      await connection.markRead(String(request.to), Array.isArray(request.ids) ? request.ids.map(String) : []);
      return answer(node, request.ref, { ok: true });
    }
    case 'inject':
      return answer(
        node,
        request.ref,
        await network.inject(
          String(request.from),
          String(request.to),
          String(request.text),
          networkMedia(request.media),
          (request.structured ?? undefined) as StructuredContent | undefined,
          networkExtras(request),
          typeof request.in_group === 'string' ? request.in_group : undefined,
        ),
      );
    case 'group_create':
      return answer(node, request.ref, {
        group: await network.createGroup(
          phone,
          String(request.subject),
          Array.isArray(request.participants) ? request.participants.map(String) : [],
        ),
      });
    case 'groups_of':
      return answer(node, request.ref, { groups: await network.groupsOf(phone) });
    case 'group_manage':
      return answer(node, request.ref, await network.manageGroup(phone, String(request.id), request.operation as GroupOperation));
    case 'group_seen_by':
      return answer(node, request.ref, { group: (await network.groupSeenBy(phone, String(request.id))) ?? null });
    case 'block':
      await network.setBlocked(phone, String(request.contact), request.blocked === true);
      return answer(node, request.ref, { ok: true });
    case 'blocklist':
      return answer(node, request.ref, { phones: await network.blocklistOf(phone) });
    case 'expect':
      await network.expect(phone);
      return answer(node, request.ref, { ok: true });
    case 'stored':
      node.awaitingStore.get(String(request.id))?.resolve();
      node.awaitingStore.delete(String(request.id));
      return;
    case 'not_stored':
      // The network keeps the message and hands it over again (sandbox-network.ts, handOver).
      node.awaitingStore.get(String(request.id))?.reject(new Error('the node could not store the message'));
      node.awaitingStore.delete(String(request.id));
      return;
    case 'receipt_recorded':
    case 'receipt_not_recorded': {
      // Not recorded: the network keeps the receipt and hands it over again (sandbox-receipts.ts).
      const waiter = node.awaitingReceipt.get(Number(request.receipt));
      node.awaitingReceipt.delete(Number(request.receipt));
      if (request.op === 'receipt_recorded') waiter?.resolve();
      else waiter?.reject(new Error('the node could not record the receipt'));
      return;
    }
    case 'journal':
      return answer(node, request.ref, { entries: network.journal() });
    case 'restrict':
      await network.restrict(phone, networkRestriction(request));
      return answer(node, request.ref, { ok: true });
    default:
      return answer(node, request.ref, { error: 'Error', message: `unknown op ${String(request.op)}` });
  }
}

/** A quote or an action that came with a send, with only the fields the network carries. */
function networkExtras(request: Record<string, unknown>): NetworkExtras {
  const extras: NetworkExtras = {};
  if (typeof request.quoted === 'string') extras.quoted = request.quoted;
  if (Array.isArray(request.mentions)) extras.mentions = request.mentions.map(String);
  if (typeof request.senderLid === 'string') {
    extras.senderLid = request.senderLid;
    extras.phoneHidden = request.phoneHidden === true;
  }
  const referral = typeof request.referral === 'object' && request.referral !== null ? adReferral(request.referral) : undefined;
  if (referral !== undefined) extras.referral = referral;
  if (request.unavailable === true) extras.unavailable = true;
  const action = request.action as Record<string, unknown> | undefined;
  if (
    typeof action === 'object' &&
    action !== null &&
    typeof action.target === 'string' &&
    (action.kind === 'react' || action.kind === 'edit' || action.kind === 'revoke' || action.kind === 'vote')
  ) {
    extras.action = {
      kind: action.kind,
      target: action.target,
      ...(typeof action.emoji === 'string' && { emoji: action.emoji }),
      ...(Array.isArray(action.options) && { options: action.options.map(String) }),
    };
  }
  if (typeof request.structured === 'object' && request.structured !== null) extras.structured = request.structured as StructuredContent;
  return extras;
}

/** Bytes that came with the request, handed on the way the network asks for them. */
function carried(media: NetworkMedia | undefined): (() => Promise<NetworkMedia>) | undefined {
  return media === undefined ? undefined : async () => media;
}

/** A message's file as a node sent it, or nothing; only the fields the network carries. */
function networkMedia(value: unknown): NetworkMedia | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const media = value as Record<string, unknown>;
  if (typeof media.base64 !== 'string' || typeof media.kind !== 'string' || typeof media.mimeType !== 'string') return undefined;
  return {
    kind: media.kind,
    mimeType: media.mimeType,
    fileName: typeof media.fileName === 'string' ? media.fileName : null,
    base64: media.base64,
  };
}
