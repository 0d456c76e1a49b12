import { AppError } from './errors.ts';

/** The proxies a number's WhatsApp connection may go through (ADR 0063). */
export const proxySchemes = ['http', 'https', 'socks5', 'socks5h'] as const;
type ProxyScheme = (typeof proxySchemes)[number];

/** Long enough for a provider's session-tagged user name; a proxy URL is not a document. */
export const PROXY_URL_MAX_LENGTH = 2048;

/** A proxy URL as checked on input: the URL to connect with, and the form that may be shown. */
export interface ProxyUrl {
  scheme: ProxyScheme;
  host: string;
  port: number;
  /** The URL as given, normalised; it may hold credentials, so it is sealed at rest and never shown. */
  href: string;
  /** Scheme, host and port, with `***` where credentials were: what an operator and the logs see. */
  redacted: string;
}

/**
 * Checks a proxy URL as an operator writes it: one of the schemes above, a host, an explicit port
 * (a proxy has no conventional one), credentials allowed, nothing else. A path, query or fragment
 * would be silently ignored by every proxy agent, so they are refused rather than kept.
 */
export function parseProxyUrl(raw: string, field = 'url'): ProxyUrl {
  const refuse = (message: string): never => {
    throw new AppError('invalid_request', message, { field, problem: 'invalid' });
  };
  const text = raw.trim();
  if (text.length === 0 || text.length > PROXY_URL_MAX_LENGTH) refuse(`A proxy URL has 1 to ${PROXY_URL_MAX_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // The text itself is not echoed: it may hold a password.
    return refuse('The proxy is not a URL; write it as scheme://[user:password@]host:port, e.g. socks5://proxy.example:1080.');
  }
  const scheme = url.protocol.slice(0, -1);
  if (!(proxySchemes as readonly string[]).includes(scheme))
    refuse(`A proxy's scheme is one of ${proxySchemes.join(', ')}, not ${scheme}.`);
  if (url.hostname === '') refuse('A proxy URL names its host.');
  // URL drops a port that is the scheme's default (http://proxy:80), so it is read as written.
  const port = url.port !== '' ? url.port : /:(\d+)\/?$/.exec(text)?.[1];
  if (port === undefined || Number(port) === 0) return refuse(`A proxy URL names its port, e.g. ${scheme}://${url.hostname}:1080.`);
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '')
    refuse('A proxy URL is scheme://[user:password@]host:port, with no path, query or fragment.');
  if (url.password !== '' && url.username === '') refuse('A proxy password needs a user name.');
  const address = `${url.hostname}:${port}`;
  const credentials = url.username !== '' ? '***@' : '';
  return {
    scheme: scheme as ProxyScheme,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(port),
    href: `${scheme}://${url.username !== '' ? `${url.username}${url.password !== '' ? `:${url.password}` : ''}@` : ''}${address}`,
    redacted: `${scheme}://${credentials}${address}`,
  };
}
