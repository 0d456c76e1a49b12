import type { AuthenticationState, GroupMetadata, proto, UserFacingSocketConfig, WAVersion } from 'baileys';
import makeWASocket from 'baileys';
import type { Logger } from 'pino';
import { cachedKeys } from './auth-state-store.ts';

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
  };
  return makeWASocket(config);
};
