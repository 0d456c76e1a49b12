import type { Agent, Dispatcher } from 'undici';
import type { AttemptError } from '../domain/webhooks.ts';
import { BlockedAddressError, type AddressPolicy } from './address-guard.ts';
import { createGuardedAgent } from './guarded-agent.ts';
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
  /** Set by a RabbitMQ publish: whether the broker answered (confirmed, nacked or returned it). */
  brokerAnswered?: boolean;
}

export interface WebhookHttpOptions {
  timeoutMs: number;
  /** Which private addresses the SSRF guard lets through (none by default). */
  addressPolicy: AddressPolicy;
  userAgent: string;
}

/**
 * Makes one delivery attempt: a POST that follows no redirect, gives up after the timeout, and
 * reaches only addresses the SSRF guard allows. Connections are pooled per origin (undici), each
 * checked by the guard when it is made. It never throws; every outcome is an AttemptResult.
 */
export class WebhookHttpClient {
  private agent: Agent;

  constructor(private readonly options: WebhookHttpOptions) {
    this.agent = this.newAgent();
  }

  private newAgent(): Agent {
    return createGuardedAgent({ addressPolicy: this.options.addressPolicy, connectTimeoutMs: this.options.timeoutMs });
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<AttemptResult> {
    const startedAt = performance.now();
    const finish = (result: Omit<AttemptResult, 'durationMs'>): AttemptResult => ({
      ...result,
      durationMs: Math.round(performance.now() - startedAt),
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return finish(failure('network', 'The webhook URL cannot be parsed.'));
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new AttemptTimeout()), this.options.timeoutMs);
    try {
      const response = await this.agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        signal: deadline.signal,
        headers: { 'content-type': 'application/json', 'user-agent': this.options.userAgent, ...basicAuthOf(target), ...headers },
        body,
      });
      const excerpt = await readExcerpt(response.body);
      const statusCode = response.statusCode;
      const isRedirect = statusCode >= 300 && statusCode < 400;
      return finish({
        statusCode,
        responseExcerpt: excerpt,
        error: isRedirect ? 'redirect' : null,
        errorDetail: isRedirect ? `Redirects are not followed (Location: ${String(response.headers.location ?? 'none')}).` : null,
        retryAfterMs:
          statusCode === 429 || statusCode === 503 ? parseRetryAfter(headerValue(response.headers['retry-after']), new Date()) : null,
      });
    } catch (error) {
      const [kind, detail] = classify(error as NodeJS.ErrnoException);
      return finish(failure(kind, detail));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Cuts every request in flight short and drops the pooled connections; later POSTs open new ones. */
  close(): void {
    const closing = this.agent;
    this.agent = this.newAgent();
    void closing.destroy();
  }
}

/** The first bytes of a receiver's answer; reading stops past the limit, and a broken body ends the excerpt. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of body) {
      if (received < EXCERPT_BYTES) chunks.push(chunk as Buffer);
      received += (chunk as Buffer).length;
      if (received > MAX_RESPONSE_BYTES) break;
    }
  } catch {
    // The status already arrived; what the body failed to carry is only the excerpt.
  } finally {
    // Destroying a body that ended would close its pooled connection too.
    if (!body.readableEnded) body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Credentials written in the URL, sent as node:http sent them: HTTP basic authentication. */
function basicAuthOf(target: URL): Record<string, string> {
  if (target.username === '' && target.password === '') return {};
  const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
  return { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
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
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return ['timeout', 'No connection within the timeout.'];
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET')
    return ['reset', 'The connection was closed before an answer.'];
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'EPROTO' || /SSL|TLS/.test(code)) return ['tls', error.message];
  return ['network', error.message];
}
