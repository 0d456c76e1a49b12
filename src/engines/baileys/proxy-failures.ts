/**
 * What a closed connection's error says of the number's proxy (ADR 0063). Pure, so each shape is
 * a unit test: the errors are those of https-proxy-agent and the `socks` client as `ws` and
 * Baileys pass them on (Baileys wraps the websocket's error as a Boom whose `data` is the original).
 */

/** The property under which the socket names the HTTP status a proxy answered instead of a tunnel. */
export const PROXY_ANSWER = 'proxyAnswerStatus';

type ProxyFailureKind =
  /** The proxy refused its credentials (HTTP 407, or SOCKS5's user/password step): retrying cannot help. */
  | 'credentials'
  /** Nothing answers at the proxy's address (refused, timed out, unknown host). */
  | 'unreachable'
  /** The proxy answered but would not open the tunnel to WhatsApp (HTTP 403/502, a SOCKS5 rejection). */
  | 'refused';

export interface ProxyFailure {
  kind: ProxyFailureKind;
  /** The words that say why, from the error, without any URL (which could hold the password). */
  detail: string;
}

/** Errors of reaching a host at all, by their Node error code. */
const CONNECT_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'];
const CONNECT_CODE = new RegExp(`\\b(${CONNECT_CODES.join('|')})\\b`);

interface ErrorShape {
  message?: unknown;
  code?: unknown;
  port?: unknown;
  hostname?: unknown;
  /** The `socks` client's errors carry the options they were made with. */
  options?: unknown;
  data?: unknown;
  [PROXY_ANSWER]?: unknown;
}

export function proxyFailureOf(error: unknown, proxy: { host: string; port: number }): ProxyFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const outer = error as ErrorShape;
  if (typeof outer[PROXY_ANSWER] === 'number') {
    const status = outer[PROXY_ANSWER];
    return { kind: status === 407 ? 'credentials' : 'refused', detail: `HTTP ${status}` };
  }
  // Baileys' Boom keeps the websocket's own error as its data.
  const inner = (typeof outer.data === 'object' && outer.data !== null ? outer.data : outer) as ErrorShape;
  const message = typeof inner.message === 'string' ? inner.message : '';
  if (/Socks5 Authentication failed|no accepted authentication type/i.test(message))
    return { kind: 'credentials', detail: 'SOCKS5 authentication failed' };
  if (/Socks5 proxy rejected connection/i.test(message)) return { kind: 'refused', detail: message.replace(/^.*?(Socks5)/i, 'SOCKS5') };
  const code = typeof inner.code === 'string' ? inner.code : CONNECT_CODE.exec(message)?.[1];
  if (code === undefined || !CONNECT_CODES.includes(code)) {
    const socksGaveUp = inner.options !== undefined && /Proxy connection timed out|Socket closed/.test(message);
    return socksGaveUp ? { kind: 'unreachable', detail: message } : undefined;
  }
  // A connection error is the proxy's when it was the proxy being reached: the SOCKS client's, or
  // a socket to the proxy's port or host (https-proxy-agent opens a plain one to the proxy first).
  const atProxy = inner.options !== undefined || inner.port === proxy.port || inner.hostname === proxy.host;
  return atProxy ? { kind: 'unreachable', detail: code } : undefined;
}
