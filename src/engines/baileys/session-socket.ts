import type { IncomingMessage } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { AuthenticationState, GroupMetadata, proto, UserFacingSocketConfig, WAVersion } from 'baileys';
import makeWASocket from 'baileys';
import type { Logger } from 'pino';
import { cachedKeys } from './auth-state-store.ts';
import type { ProxyRoute } from './proxy-route.ts';
import { PROXY_ANSWER } from './proxy-failures.ts';

/**
 * The Baileys socket the session drives, as Baileys types it. It is not narrowed by hand, so a
 * capability that calls a socket method not used before costs no edit here (ADR 0059); the adapter
 * tests' double implements the part they exercise, each method checked against Baileys' signature.
 */
export type SessionSocket = ReturnType<typeof makeWASocket>;

export interface SocketOptions {
  auth: AuthenticationState;
  logger: Logger;
  /** Looks up a message we sent, for WhatsApp's retry requests. */
  getMessage(id: string): proto.IMessage | undefined;
  /** A group's metadata as the session remembers it, so that a send to it does not ask WhatsApp. */
  cachedGroupMetadata(jid: string): GroupMetadata | undefined;
  /** Whether the number shows itself online as the socket connects (its show_online setting). */
  markOnlineOnConnect: boolean;
  /** The WhatsApp Web version to announce; undefined uses Baileys' default. */
  version: WAVersion | undefined;
  /** The number's proxy (ADR 0063): the websocket, uploads and downloads go through it; undefined connects directly. */
  proxy: ProxyRoute | undefined;
  /** WhatsApp's websocket address; only tests name another (a local server), undefined is Baileys' own. */
  webSocketUrl?: URL;
}

export type SocketFactory = (options: SocketOptions) => SessionSocket;

/** The real socket, configured against the failure modes other gateways' users report. */
export const createBaileysSocket: SocketFactory = (options) => {
  const config: UserFacingSocketConfig = {
    auth: { creds: options.auth.creds, keys: cachedKeys(options.auth.keys, options.logger) },
    // Baileys narrates every connection attempt at info level; the session logs what matters,
    // one line per reconnect step, so only Baileys' warnings and errors pass through.
    logger: options.logger.child({ component: 'baileys' }, { level: 'warn' }),
    // Online presence silences the phone's own notifications, so a number shows itself online
    // only when its show_online setting asks (ADR 0033).
    markOnlineOnConnect: options.markOnlineOnConnect,
    // No full history: a gateway relays new messages, and a full sync is what makes memory grow.
    // The smaller initial syncs stay on (Baileys' default): they carry the LID-to-phone mappings.
    syncFullHistory: false,
    getMessage: async (key) => (key.id ? options.getMessage(key.id) : undefined),
    cachedGroupMetadata: async (jid) => options.cachedGroupMetadata(jid),
    ...(options.version !== undefined && { version: options.version }),
    // Typed as https.Agent by Baileys, which only hands it to ws and node:https as an http.Agent.
    ...(options.proxy !== undefined && { agent: options.proxy.agent as HttpsAgent, fetchAgent: options.proxy.agent as HttpsAgent }),
    ...(options.webSocketUrl !== undefined && { waWebSocketUrl: options.webSocketUrl }),
  };
  const socket = makeWASocket(config);
  if (options.proxy !== undefined) endOnRefusedTunnel(socket);
  return socket;
};

/**
 * A proxy that will not open the tunnel answers the websocket's request with an HTTP status
 * (407 for its credentials, 403 or 502 for the destination). Baileys listens for that answer
 * without acting on it, so the connection would hang until its timeout and close with a
 * misleading 408; it is ended at once instead, with the proxy's answer as its cause.
 */
function endOnRefusedTunnel(socket: SessionSocket): void {
  socket.ws.on('unexpected-response', (request: { destroy(): void }, response: IncomingMessage) => {
    request.destroy();
    const status = response.statusCode ?? 0;
    const words = `${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
    socket.end(Object.assign(new Error(`the proxy answered HTTP ${words}`), { [PROXY_ANSWER]: status }));
  });
}
