import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { AttemptError } from '../domain/webhooks.ts';
import { BlockedAddressError, guardedLookup, mayConnect, portOf, type AddressPolicy } from './address-guard.ts';
import { parseRetryAfter } from './retry-policy.ts';

const EXCERPT_BYTES = 2048;
/** A receiver's answer is read only this far; the rest is not worth holding a socket for. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface AttemptResult {
  statusCode: number | null;
  responseExcerpt: string | null;
  error: AttemptError | null;
  /** The endpoint's own words, for the log; never shown to other tenants. */
  errorDetail: string | null;
  durationMs: number;
  retryAfterMs: number | null;
}

export interface WebhookHttpOptions {
  timeoutMs: number;
  /** Which private addresses the SSRF guard lets through (none by default). */
  addressPolicy: AddressPolicy;
  userAgent: string;
}

/**
 * Makes one delivery attempt: a POST that follows no redirect, gives up after the timeout, and
 * reaches only addresses the SSRF guard allows, checked after DNS and again on the connected
 * socket. It never throws; every outcome is an AttemptResult.
 */
export class WebhookHttpClient {
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });

  constructor(private readonly options: WebhookHttpOptions) {}

  post(url: string, body: string, headers: Record<string, string>): Promise<AttemptResult> {
    const startedAt = performance.now();
    const finish = (result: Omit<AttemptResult, 'durationMs'>): AttemptResult => ({
      ...result,
      durationMs: Math.round(performance.now() - startedAt),
    });
    return new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        resolve(finish(failure('network', 'The webhook URL cannot be parsed.')));
        return;
      }
      const policy = this.options.addressPolicy;
      const port = portOf(target);
      const literal = target.hostname.replace(/^\[|\]$/g, '');
      if (/^[\d.]+$|:/.test(literal) && !mayConnect(policy, literal, port, target.hostname)) {
        resolve(finish(failure('blocked_address', `${literal} is not an address webhooks may reach.`)));
        return;
      }
      const transport = target.protocol === 'https:' ? https : http;
      const request = transport.request(target, {
        method: 'POST',
        agent: target.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
        lookup: guardedLookup(policy, port, target.hostname) as never,
        headers: {
          'content-type': 'application/json',
          'user-agent': this.options.userAgent,
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
      });
      const timer = setTimeout(() => request.destroy(new AttemptTimeout()), this.options.timeoutMs);
      request.on('socket', (socket: Socket) => {
        // A reused keep-alive socket was checked when it connected, and will not connect again.
        if (policy.everything || !socket.connecting) return;
        socket.once('connect', () => {
          if (socket.remoteAddress && !mayConnect(policy, socket.remoteAddress, socket.remotePort ?? port, target.hostname)) {
            request.destroy(new BlockedAddressError(target.hostname, [socket.remoteAddress]));
          }
        });
      });
      request.on('error', (error) => {
        clearTimeout(timer);
        const [kind, detail] = classify(error);
        resolve(finish(failure(kind, detail)));
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          if (received < EXCERPT_BYTES) chunks.push(chunk);
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) response.destroy();
        });
        const done = () => {
          clearTimeout(timer);
          const statusCode = response.statusCode ?? 0;
          const isRedirect = statusCode >= 300 && statusCode < 400;
          resolve(
            finish({
              statusCode,
              responseExcerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'),
              error: isRedirect ? 'redirect' : null,
              errorDetail: isRedirect ? `Redirects are not followed (Location: ${response.headers.location ?? 'none'}).` : null,
              retryAfterMs: statusCode === 429 || statusCode === 503 ? parseRetryAfter(response.headers['retry-after'], new Date()) : null,
            }),
          );
        };
        response.once('end', done);
        response.once('close', done);
        response.once('error', done);
      });
      request.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

class AttemptTimeout extends Error {
  readonly code = 'WAGW_TIMEOUT';
}

function failure(error: AttemptError, detail: string): Omit<AttemptResult, 'durationMs'> {
  return { statusCode: null, responseExcerpt: null, error, errorDetail: detail, retryAfterMs: null };
}

function classify(error: NodeJS.ErrnoException): [AttemptError, string] {
  const code = error.code ?? '';
  if (error instanceof AttemptTimeout) return ['timeout', 'No answer within the timeout.'];
  if (error instanceof BlockedAddressError) return ['blocked_address', error.message];
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA') return ['dns', `The host does not resolve (${code}).`];
  if (code === 'ECONNREFUSED') return ['refused', 'The connection was refused.'];
  if (code === 'ECONNRESET' || code === 'EPIPE') return ['reset', 'The connection was closed before an answer.'];
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'EPROTO' || /SSL|TLS/.test(code)) return ['tls', error.message];
  return ['network', error.message];
}
