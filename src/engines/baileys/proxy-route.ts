import { lookup } from 'node:dns/promises';
import type { Agent as HttpAgent } from 'node:http';
import tls from 'node:tls';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksClient } from 'socks';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { Agent, ProxyAgent, type buildConnector, type Dispatcher } from 'undici';
import type { ProxyUrl } from '../../domain/proxy-url.ts';

/** How long reaching a SOCKS proxy and its handshake may take before a download fails. */
const SOCKS_CONNECT_TIMEOUT_MS = 20_000;

/**
 * One number's way out to WhatsApp through its proxy (ADR 0063): the websocket and Baileys'
 * uploads take a Node agent, the media downloads (fetch) an undici dispatcher, both to the same
 * proxy. Built afresh for each connection, so a proxy the operator changed applies to the next one.
 */
export interface ProxyRoute {
  proxy: ProxyUrl;
  /** For `ws` (the websocket) and Baileys' uploads, which go through node:https. */
  agent: HttpAgent;
  /** For fetch: Baileys' downloads and profile pictures. */
  dispatcher: Dispatcher;
  close(): Promise<void>;
}

export function proxyRoute(proxy: ProxyUrl): ProxyRoute {
  const socks = proxy.scheme === 'socks5' || proxy.scheme === 'socks5h';
  const agent = socks ? new SocksProxyAgent(proxy.href) : new HttpsProxyAgent(proxy.href);
  const dispatcher = socks ? new Agent({ connect: socksConnector(proxy) }) : new ProxyAgent({ uri: proxy.href });
  return {
    proxy,
    agent,
    dispatcher,
    close: async () => {
      agent.destroy();
      await dispatcher.close();
    },
  };
}

/**
 * undici's own SOCKS5 agent is marked experimental and knows no socks5h, so downloads reach a
 * SOCKS proxy through the `socks` client (the one socks-proxy-agent uses) and TLS on top. With
 * socks5 the name is resolved here, with socks5h by the proxy, as the schemes promise.
 */
function socksConnector(proxy: ProxyUrl): buildConnector.connector {
  const url = new URL(proxy.href);
  return (options, callback) => {
    void (async () => {
      const host = proxy.scheme === 'socks5' ? (await lookup(options.hostname)).address : options.hostname;
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      const { socket } = await SocksClient.createConnection({
        command: 'connect',
        destination: { host, port },
        proxy: {
          host: proxy.host,
          port: proxy.port,
          type: 5,
          ...(url.username !== '' && { userId: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }),
        },
        timeout: SOCKS_CONNECT_TIMEOUT_MS,
      });
      if (options.protocol !== 'https:') return callback(null, socket);
      const secure = tls.connect({ socket, servername: options.servername ?? options.hostname, ALPNProtocols: ['http/1.1'] });
      const failed = (error: Error) => callback(error, null);
      secure.once('error', failed);
      secure.once('secureConnect', () => {
        secure.off('error', failed);
        callback(null, secure);
      });
    })().catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null));
  };
}
