import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Headers of a call between nodes; the signature covers the time, the nonce, the method, the path and the body. */
const TIME_HEADER = 'x-wagw-node-time';
const NONCE_HEADER = 'x-wagw-node-nonce';
const SIGNATURE_HEADER = 'x-wagw-node-signature';
/** How far a call's time may be from the receiver's clock; also how long its nonce is remembered. */
const WINDOW_MS = 30_000;

/** The key nodes sign their calls to each other with, derived from the shared WAGW_SECRET_KEY. */
export function deriveClusterKey(secretKey: Buffer): Buffer {
  return createHmac('sha256', secretKey).update('wa-gateway cluster calls').digest();
}

function signature(key: Buffer, time: string, nonce: string, method: string, path: string, body: string): Buffer {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', key).update(`${time}\n${nonce}\n${method.toUpperCase()}\n${path}\n${bodyHash}`).digest();
}

/**
 * Checks calls from other nodes: a valid signature by the cluster key, a time within the window,
 * and a nonce not seen within it, so that a captured call cannot be replayed.
 */
export class NodeCallVerifier {
  private readonly seen = new Map<string, number>();

  constructor(private readonly key: Buffer) {}

  verify(method: string, path: string, body: string, headers: Record<string, string | string[] | undefined>): boolean {
    const [time, nonce, given] = [headers[TIME_HEADER], headers[NONCE_HEADER], headers[SIGNATURE_HEADER]];
    if (typeof time !== 'string' || typeof nonce !== 'string' || typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) return false;
    const now = Date.now();
    if (!/^\d+$/.test(time) || Math.abs(now - Number(time)) > WINDOW_MS || !/^[0-9a-f]{32}$/.test(nonce)) return false;
    if (!timingSafeEqual(Buffer.from(given, 'hex'), signature(this.key, time, nonce, method, path, body))) return false;
    for (const [old, at] of this.seen) {
      if (now - at <= WINDOW_MS * 2) break;
      this.seen.delete(old);
    }
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, now);
    return true;
  }
}

export interface NodeAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * A node could not be asked. `delivered` false means the request surely never arrived (refused
 * connection); `silent` means it was sent but the node stopped answering (no answer within the
 * time-out, or it no longer answered a liveness probe), so it may or may not have been acted on.
 */
export class NodeUnreachableError extends Error {
  constructor(
    readonly delivered: boolean,
    cause: unknown,
    readonly silent = false,
  ) {
    super(`the owning node could not be reached (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    this.name = 'NodeUnreachableError';
  }
}

/** The reason a call is abandoned when its node stops answering while the call is under way. */
export class NodeStoppedAnsweringError extends Error {
  constructor() {
    super('the node stopped answering');
    this.name = 'NodeStoppedAnsweringError';
  }
}

const NOT_DELIVERED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * Calls other nodes' internal API, signed with the cluster key. Every call is bounded by
 * WAGW_NODE_CALL_TIMEOUT_MS: a node that is frozen (SIGSTOP, a VM pause) accepts connections
 * in its kernel but never answers, and without a bound the caller would wait as long as it.
 */
export class NodeClient {
  constructor(
    private readonly key: Buffer,
    private readonly timeoutMs: number,
  ) {}

  /** `signal` abandons the call early (its reason is kept as the cause). */
  async call(baseUrl: string, method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal, timeoutMs = this.timeoutMs): Promise<NodeAnswer> {
    const text = body === undefined ? '' : JSON.stringify(body);
    const time = String(Date.now());
    const nonce = randomBytes(16).toString('hex');
    const bounded = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(signal === undefined ? [] : [signal])]);
    try {
      const response = await fetch(new URL(path, baseUrl), {
        method,
        headers: {
          ...(body !== undefined && { 'content-type': 'application/json' }),
          [TIME_HEADER]: time,
          [NONCE_HEADER]: nonce,
          [SIGNATURE_HEADER]: signature(this.key, time, nonce, method, path, text).toString('hex'),
        },
        ...(body !== undefined && { body: text }),
        signal: bounded,
      });
      return { status: response.status, headers: response.headers, body: await response.json() };
    } catch (error) {
      if (bounded.aborted) throw new NodeUnreachableError(true, bounded.reason, true);
      const code = (error as { cause?: { code?: string } }).cause?.code;
      throw new NodeUnreachableError(code === undefined || !NOT_DELIVERED.has(code), error);
    }
  }

  /** Whether the node answers at all within `timeoutMs`: a frozen one does not. */
  async answers(baseUrl: string, timeoutMs: number): Promise<boolean> {
    try {
      await this.call(baseUrl, 'GET', ALIVE_PATH, undefined, undefined, timeoutMs);
      return true;
    } catch {
      return false;
    }
  }
}

/** The internal route a node answers at once, touching nothing: the liveness probe. */
export const ALIVE_PATH = '/internal/alive';
