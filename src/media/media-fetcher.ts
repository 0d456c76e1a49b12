import type { Agent, Dispatcher } from 'undici';
import { AppError } from '../domain/errors.ts';
import { BlockedAddressError, type AddressPolicy } from '../webhooks/address-guard.ts';
import { createGuardedAgent } from '../webhooks/guarded-agent.ts';

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
  private readonly agent: Agent;

  constructor(private readonly settings: MediaFetchSettings) {
    // A silent upstream is the idle time-out, whether it stalls before the headers or mid-body.
    this.agent = createGuardedAgent({
      addressPolicy: settings.addressPolicy,
      connectTimeoutMs: settings.connectTimeoutMs,
      headersTimeoutMs: settings.idleTimeoutMs,
      bodyTimeoutMs: settings.idleTimeoutMs,
    });
  }

  async fetch(url: string): Promise<FetchedMedia> {
    let target = parseSourceUrl(url);
    for (let redirects = 0; ; redirects++) {
      const response = await this.request(target);
      const status = response.statusCode;
      const location = headerValue(response.headers.location);
      if (status >= 300 && status < 400 && location !== undefined) {
        response.body.resume();
        if (redirects === MAX_REDIRECTS) throw unreachable(target, `more than ${MAX_REDIRECTS} redirects`);
        target = parseSourceUrl(new URL(location, target).toString());
        continue;
      }
      if (status < 200 || status >= 300) {
        response.body.resume();
        throw new AppError('media_url_unreachable', `${target.host} answered ${status} for media.url.`, {
          field: 'media.url',
          host: target.host,
          reason: 'status',
          upstream_status: status,
        });
      }
      const length = Number(headerValue(response.headers['content-length']));
      if (Number.isFinite(length) && length > this.settings.largestFileBytes) {
        response.body.destroy();
        throw new AppError('media_too_large', `media.url is ${length} bytes, more than any file may be.`, {
          kind: 'any',
          limit_bytes: this.settings.largestFileBytes,
        });
      }
      return {
        bytes: readBody(response.body, target),
        contentType: headerValue(response.headers['content-type']),
        fileName: fileNameOf(headerValue(response.headers['content-disposition']), target),
      };
    }
  }

  private async request(target: URL): Promise<Dispatcher.ResponseData> {
    try {
      return await this.agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'GET',
        headers: { 'user-agent': this.settings.userAgent, accept: '*/*' },
      });
    } catch (error) {
      throw fetchError(error as NodeJS.ErrnoException, target);
    }
  }

  close(): void {
    void this.agent.destroy();
  }
}

/** The body, with a stall or a dropped connection turned into the same clear error. */
async function* readBody(body: Dispatcher.ResponseData['body'], target: URL): AsyncIterable<Buffer> {
  try {
    for await (const chunk of body) yield chunk as Buffer;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'UND_ERR_SOCKET' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH')
      throw unreachable(target, 'the connection closed before the whole file arrived');
    throw fetchError(error as NodeJS.ErrnoException, target);
  } finally {
    body.destroy();
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function parseSourceUrl(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new AppError('invalid_media', 'media.url is not an absolute URL.', { field: 'media.url' });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new AppError('invalid_media', 'media.url must be http or https.', { field: 'media.url' });
  if (target.username !== '' || target.password !== '')
    throw new AppError('invalid_media', 'media.url must not carry credentials.', { field: 'media.url' });
  return target;
}

function fetchError(error: NodeJS.ErrnoException, target: URL): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof BlockedAddressError) return blocked(target, []);
  const code = error.code ?? '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return unreachable(target, 'the connection was not made in time', 'connect_timeout');
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return unreachable(target, 'the upstream stopped sending', 'idle_timeout');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA') return unreachable(target, 'the host does not resolve', 'dns');
  if (code === 'ECONNREFUSED') return unreachable(target, 'the connection was refused', 'refused');
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || /SSL|TLS/.test(code)) return unreachable(target, 'TLS failed', 'tls');
  return unreachable(target, 'the connection failed', 'network');
}

function unreachable(target: URL, what: string, reason = 'network'): AppError {
  return new AppError('media_url_unreachable', `media.url could not be fetched from ${target.host}: ${what}.`, {
    field: 'media.url',
    host: target.host,
    reason,
    upstream_status: null,
  });
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
