import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { AppError } from '../domain/errors.ts';
import { BlockedAddressError, guardedLookup, mayConnect, portOf, type AddressPolicy } from '../webhooks/address-guard.ts';

export interface MediaFetchSettings {
  /** The SSRF guard of webhooks: the same addresses are off limits, checked the same way. */
  addressPolicy: AddressPolicy;
  /** How long the connection (DNS, TCP and TLS) may take. */
  connectTimeoutMs: number;
  /** How long the upstream may go silent while sending the headers or the body. */
  idleTimeoutMs: number;
  /** The most bytes any kind may have: a larger Content-Length is refused before reading. */
  largestFileBytes: number;
  userAgent: string;
}

/** A fetched file, still streaming: its bytes, and what the upstream said of it. */
export interface FetchedMedia {
  bytes: AsyncIterable<Buffer>;
  /** The upstream's Content-Type; used only for bytes that have no signature of their own. */
  contentType: string | undefined;
  /** From Content-Disposition, else the last segment of the URL's path. */
  fileName: string | undefined;
}

const MAX_REDIRECTS = 5;

/**
 * Fetches a send's `media.url`. The upstream is a third party, so: only http(s); every address
 * dialled, including each redirect's, passes the webhook SSRF guard after DNS and again on the
 * connected socket; at most five redirects; bounded connection and idle time (the caller's own
 * request is never timed out, only the wait on a silent upstream). Every failure is an AppError
 * naming what went wrong.
 */
export class MediaFetcher {
  private readonly httpAgent = new http.Agent({ keepAlive: false });
  private readonly httpsAgent = new https.Agent({ keepAlive: false });

  constructor(private readonly settings: MediaFetchSettings) {}

  async fetch(url: string): Promise<FetchedMedia> {
    let target = parseSourceUrl(url);
    for (let redirects = 0; ; redirects++) {
      const { response, timeout } = await this.request(target);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location !== undefined) {
        response.resume();
        if (redirects === MAX_REDIRECTS) throw unreachable(target, `more than ${MAX_REDIRECTS} redirects`);
        target = parseSourceUrl(new URL(response.headers.location, target).toString());
        continue;
      }
      if (status < 200 || status >= 300) {
        response.resume();
        throw new AppError('media_url_unreachable', `${target.host} answered ${status} for media.url.`, { field: 'media.url', host: target.host, reason: 'status', upstream_status: status });
      }
      const length = Number(response.headers['content-length']);
      if (Number.isFinite(length) && length > this.settings.largestFileBytes) {
        response.destroy();
        throw new AppError('media_too_large', `media.url is ${length} bytes, more than any file may be.`, { kind: 'any', limit_bytes: this.settings.largestFileBytes });
      }
      return { bytes: this.guardIdle(response, target, timeout), contentType: response.headers['content-type'], fileName: fileNameOf(response.headers['content-disposition'], target) };
    }
  }

  /** The response, and the time-out that ended it, if one did (the body's error then says only "aborted"). */
  private request(target: URL): Promise<{ response: http.IncomingMessage; timeout: () => FetchTimeout | undefined }> {
    const { addressPolicy: policy, connectTimeoutMs, idleTimeoutMs } = this.settings;
    const port = portOf(target);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (/^[\d.]+$|:/.test(literal) && !mayConnect(policy, literal, port, target.hostname)) return Promise.reject(blocked(target, [literal]));
    let fired: FetchTimeout | undefined;
    const stop = (request: http.ClientRequest, phase: 'connect' | 'idle') => {
      fired = new FetchTimeout(phase);
      request.destroy(fired);
    };
    return new Promise((resolve, reject) => {
      const transport = target.protocol === 'https:' ? https : http;
      const request = transport.request(target, {
        method: 'GET',
        agent: target.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        lookup: guardedLookup(policy, port, target.hostname) as never,
        headers: { 'user-agent': this.settings.userAgent, accept: '*/*' },
      });
      const connectTimer = setTimeout(() => stop(request, 'connect'), connectTimeoutMs);
      request.on('socket', (socket: Socket) => {
        const connected = () => {
          clearTimeout(connectTimer);
          // Silence from here on, before the headers or between chunks, ends the fetch.
          socket.setTimeout(idleTimeoutMs, () => stop(request, 'idle'));
        };
        if (!socket.connecting) {
          connected();
          return;
        }
        socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
          if (!policy.everything && socket.remoteAddress && !mayConnect(policy, socket.remoteAddress, socket.remotePort ?? port, target.hostname)) {
            request.destroy(new BlockedAddressError(target.hostname, [socket.remoteAddress]));
            return;
          }
          connected();
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(connectTimer);
        reject(fetchError(error, target));
      });
      request.on('response', (response) => resolve({ response, timeout: () => fired }));
      request.end();
    });
  }

  /** The body, with a stall or a dropped connection turned into the same clear error. */
  private async *guardIdle(response: http.IncomingMessage, target: URL, timeout: () => FetchTimeout | undefined): AsyncIterable<Buffer> {
    try {
      for await (const chunk of response) yield chunk as Buffer;
    } catch (error) {
      throw fetchError(timeout() ?? (error as NodeJS.ErrnoException), target);
    } finally {
      response.destroy();
    }
    if (timeout() !== undefined) throw fetchError(timeout()!, target);
    if (!response.complete) throw unreachable(target, 'the connection closed before the whole file arrived');
  }
}

class FetchTimeout extends Error {
  constructor(readonly phase: 'connect' | 'idle') {
    super(phase === 'connect' ? 'the connection was not made in time' : 'the upstream stopped sending');
  }
}

function parseSourceUrl(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new AppError('invalid_media', 'media.url is not an absolute URL.', { field: 'media.url' });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new AppError('invalid_media', 'media.url must be http or https.', { field: 'media.url' });
  if (target.username !== '' || target.password !== '') throw new AppError('invalid_media', 'media.url must not carry credentials.', { field: 'media.url' });
  return target;
}

function fetchError(error: NodeJS.ErrnoException, target: URL): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof BlockedAddressError) return blocked(target, []);
  if (error instanceof FetchTimeout) return unreachable(target, error.message, error.phase === 'connect' ? 'connect_timeout' : 'idle_timeout');
  const code = error.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA') return unreachable(target, 'the host does not resolve', 'dns');
  if (code === 'ECONNREFUSED') return unreachable(target, 'the connection was refused', 'refused');
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || /SSL|TLS/.test(code)) return unreachable(target, 'TLS failed', 'tls');
  return unreachable(target, 'the connection failed', 'network');
}

function unreachable(target: URL, what: string, reason = 'network'): AppError {
  return new AppError('media_url_unreachable', `media.url could not be fetched from ${target.host}: ${what}.`, { field: 'media.url', host: target.host, reason, upstream_status: null });
}

function blocked(target: URL, addresses: string[]): AppError {
  return new AppError('media_url_blocked', `media.url leads only to addresses the gateway may not reach (${target.host}).`, {
    field: 'media.url',
    host: target.host,
    ...(addresses.length > 0 && { resolved_addresses: addresses }),
  });
}

/** A name for the file: the upstream's Content-Disposition filename, else the URL path's last segment. */
function fileNameOf(disposition: string | undefined, target: URL): string | undefined {
  const star = disposition === undefined ? null : /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
  if (star !== null) {
    try {
      return decodeURIComponent(star[1]!.trim());
    } catch {
      // A malformed encoding falls through to the plain name.
    }
  }
  const plain = disposition === undefined ? null : /filename\s*=\s*"?([^";]+)"?/i.exec(disposition);
  if (plain !== null) return plain[1]!.trim();
  const segment = target.pathname.split('/').pop();
  if (segment === undefined || segment === '') return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
