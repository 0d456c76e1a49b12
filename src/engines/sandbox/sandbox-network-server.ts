import fs from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import type { StructuredContent } from '../../domain/structured-content.ts';
import { fileGroupArchive } from './sandbox-group-file.ts';
import { GroupRefusedError, type GroupOperation } from './sandbox-groups.ts';
import { SandboxNetwork, type JournalEntry, type NetworkConnection, type NetworkExtras, type NetworkMedia, type NetworkMessage } from './sandbox-network.ts';

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
 * Requests carry `ref` and are answered with the same `ref`:
 *   connect {phone, node} · disconnect {phone} · send {phone, to, text, media?} ·
 *   inject {from, to, text, media?, structured?, in_group?} ·
 *   stored {id} (the node has stored incoming message id) · journal {}
 * Pushed to the node: incoming {phone, message} · receipt {phone, id, status} · replaced {phone}
 */
export async function serveSandboxNetwork(options: { host: string; port: number; journalFile?: string; groupsFile?: string }): Promise<{ port: number; close(): Promise<void> }> {
  const groupArchive = options.groupsFile === undefined ? undefined : fileGroupArchive(options.groupsFile);
  const journalStream = options.journalFile === undefined ? undefined : fs.createWriteStream(options.journalFile, { flags: 'a' });
  const network = new SandboxNetwork((entry: JournalEntry) => journalStream?.write(`${JSON.stringify(entry)}\n`), SHARED_JOURNAL_LIMIT, groupArchive);
  // Before any node connects, so that its numbers find their groups from the first request.
  await network.restoreGroups().catch((error: unknown) => {
    journalStream?.end();
    throw error;
  });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const connections = new Map<string, NetworkConnection>();
    const awaitingStore = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
    const push = (message: object) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    };
    const answer = (ref: unknown, body: object) => push({ ref, ...body });
    const lines = readline.createInterface({ input: socket });
    // A node that dies resets its socket; readline passes the error on, and the close handles it.
    lines.on('error', () => socket.destroy());
    lines.on('line', (line) => {
      let request: Record<string, unknown>;
      try {
        request = JSON.parse(line) as Record<string, unknown>;
      } catch {
        socket.destroy();
        return;
      }
      void handle(request).catch((error: unknown) =>
        answer(request.ref, { error: error instanceof Error ? error.name : 'Error', message: error instanceof Error ? error.message : String(error), ...(error instanceof GroupRefusedError && { reason: error.reason }) }),
      );
    });
    const handle = async (request: Record<string, unknown>) => {
      const phone = String(request.phone ?? '');
      switch (request.op) {
        case 'connect': {
          const connection = await network.connect(phone, String(request.node), {
            incoming: (message: NetworkMessage) =>
              new Promise<void>((resolve, reject) => {
                awaitingStore.set(message.id, { resolve, reject });
                push({ op: 'incoming', phone, message });
              }),
            receipt: (receipt) => push({ op: 'receipt', phone, ...receipt }),
            groupChanged: (change) => push({ op: 'group_changed', phone, change }),
            replaced: () => {
              connections.delete(phone);
              push({ op: 'replaced', phone });
            },
          });
          connections.set(phone, connection);
          return answer(request.ref, { ok: true });
        }
        case 'disconnect':
          await connections.get(phone)?.close();
          connections.delete(phone);
          return answer(request.ref, { ok: true });
        case 'send': {
          const connection = connections.get(phone);
          if (connection === undefined) return answer(request.ref, { error: 'NotConnectedError', message: `${phone} has no live connection to the sandbox network.` });
          return answer(request.ref, await connection.send(String(request.to), String(request.text), carried(networkMedia(request.media)), networkExtras(request)));
        }
        case 'read': {
          const connection = connections.get(phone);
          if (connection === undefined) return answer(request.ref, { error: 'NotConnectedError', message: `${phone} has no live connection to the sandbox network.` });
          await connection.markRead(String(request.to), Array.isArray(request.ids) ? request.ids.map(String) : []);
          return answer(request.ref, { ok: true });
        }
        case 'inject':
          return answer(
            request.ref,
            await network.inject(String(request.from), String(request.to), String(request.text), networkMedia(request.media), (request.structured ?? undefined) as StructuredContent | undefined, networkExtras(request), typeof request.in_group === 'string' ? request.in_group : undefined),
          );
        case 'group_create':
          return answer(request.ref, { group: await network.createGroup(phone, String(request.subject), Array.isArray(request.participants) ? request.participants.map(String) : []) });
        case 'groups_of':
          return answer(request.ref, { groups: await network.groupsOf(phone) });
        case 'group_manage':
          return answer(request.ref, await network.manageGroup(phone, String(request.id), request.operation as GroupOperation));
        case 'group_seen_by':
          return answer(request.ref, { group: (await network.groupSeenBy(phone, String(request.id))) ?? null });
        case 'expect':
          await network.expect(phone);
          return answer(request.ref, { ok: true });
        case 'stored':
          awaitingStore.get(String(request.id))?.resolve();
          awaitingStore.delete(String(request.id));
          return;
        case 'journal':
          return answer(request.ref, { entries: network.journal() });
        default:
          return answer(request.ref, { error: 'Error', message: `unknown op ${String(request.op)}` });
      }
    };
    const closeAll = () => {
      sockets.delete(socket);
      for (const connection of connections.values()) void connection.close();
      connections.clear();
      for (const waiter of awaitingStore.values()) waiter.reject(new Error('the node went away'));
      awaitingStore.clear();
    };
    socket.on('close', closeAll);
    socket.on('error', () => socket.destroy());
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
          journalStream?.end();
          resolve();
        });
      }),
  };
}

/** A quote or an action that came with a send, with only the fields the network carries. */
function networkExtras(request: Record<string, unknown>): NetworkExtras {
  const extras: NetworkExtras = {};
  if (typeof request.quoted === 'string') extras.quoted = request.quoted;
  if (Array.isArray(request.mentions)) extras.mentions = request.mentions.map(String);
  const action = request.action as Record<string, unknown> | undefined;
  if (typeof action === 'object' && action !== null && typeof action.target === 'string' && (action.kind === 'react' || action.kind === 'edit' || action.kind === 'revoke')) {
    extras.action = { kind: action.kind, target: action.target, ...(typeof action.emoji === 'string' && { emoji: action.emoji }) };
  }
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
  return { kind: media.kind, mimeType: media.mimeType, fileName: typeof media.fileName === 'string' ? media.fileName : null, base64: media.base64 };
}
