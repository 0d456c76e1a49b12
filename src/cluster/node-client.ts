import { createHash, createHmac, createSecretKey, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Headers of a call between nodes. The signature covers the time, the nonce, the method, the
 * path, the node the call is for, and the body's SHA-256, which travels in a header of its own
 * so that a call is judged from its headers, before any of its body is read.
 */
const TIME_HEADER = 'x-wagw-node-time';
const NONCE_HEADER = 'x-wagw-node-nonce';
const BODY_HASH_HEADER = 'x-wagw-node-body-sha256';
const SIGNATURE_HEADER = 'x-wagw-node-signature';
/** How far a call's time may be from the receiver's clock; also how long its nonce is remembered. */
const WINDOW_MS = 30_000;

/**
 * The key nodes sign their calls to each other with, derived from the shared WAGW_SECRET_KEY, as a
 * KeyObject made once: an HMAC keyed with a Buffer costs far more on Node 24 (webhooks/signing.ts).
 */
export function deriveClusterKey(secretKey: Buffer): KeyObject {
  return createSecretKey(createHmac('sha256', secretKey).update('wa-gateway cluster calls').digest());
}

/** A node as another calls it: its id, which the call's signature names, and its URL. */
export interface NodeAddress {
  nodeId: string;
  url: string;
}

interface SignedParts {
  time: string;
  nonce: string;
  method: string;
  path: string;
  destinationNodeId: string;
  bodyHash: string;
}

function signature(key: KeyObject, parts: SignedParts): Buffer {
  const text = [parts.time, parts.nonce, parts.method.toUpperCase(), parts.path, parts.destinationNodeId, parts.bodyHash].join('\n');
  return createHmac('sha256', key).update(text).digest();
}

function bodyHashOf(body: string): string {
  return createHash('sha256').update(body).digest('hex');
}

type IncomingHeaders = Record<string, string | string[] | undefined>;

/**
 * Checks calls from other nodes: a valid signature by the cluster key, made for this node, a
 * time within the window, and a nonce not seen within it, so that a captured call can be
 * replayed neither here nor on another node.
 */
export class NodeCallVerifier {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly key: KeyObject,
    private readonly ownNodeId: string,
  ) {}

  /** The headers' verdict, before the body is read; bodyMatches then checks the body they name. */
  verifyHeaders(method: string, path: string, headers: IncomingHeaders): boolean {
    const [time, nonce, bodyHash, given] = [
      headers[TIME_HEADER],
      headers[NONCE_HEADER],
      headers[BODY_HASH_HEADER],
      headers[SIGNATURE_HEADER],
    ];
    if (typeof time !== 'string' || typeof nonce !== 'string' || typeof bodyHash !== 'string' || typeof given !== 'string') return false;
    if (!/^[0-9a-f]{64}$/.test(given) || !/^[0-9a-f]{64}$/.test(bodyHash) || !/^[0-9a-f]{32}$/.test(nonce)) return false;
    const now = Date.now();
    if (!/^\d+$/.test(time) || Math.abs(now - Number(time)) > WINDOW_MS) return false;
    const expected = signature(this.key, { time, nonce, method, path, destinationNodeId: this.ownNodeId, bodyHash });
    if (!timingSafeEqual(Buffer.from(given, 'hex'), expected)) return false;
    for (const [old, at] of this.seen) {
      if (now - at <= WINDOW_MS * 2) break;
      this.seen.delete(old);
    }
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, now);
    return true;
  }

  /** Whether the body read is the one the verified headers signed. */
  bodyMatches(body: string, headers: IncomingHeaders): boolean {
    const signed = headers[BODY_HASH_HEADER];
    return typeof signed === 'string' && timingSafeEqual(Buffer.from(signed, 'hex'), Buffer.from(bodyHashOf(body), 'hex'));
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

/** The headers that sign a call to `destinationNodeId`'s internal API with the cluster key. */
export function signedCallHeaders(
  key: KeyObject,
  destinationNodeId: string,
  method: string,
  path: string,
  body: string,
): Record<string, string> {
  const parts = {
    time: String(Date.now()),
    nonce: randomBytes(16).toString('hex'),
    method,
    path,
    destinationNodeId,
    bodyHash: bodyHashOf(body),
  };
  return {
    [TIME_HEADER]: parts.time,
    [NONCE_HEADER]: parts.nonce,
    [BODY_HASH_HEADER]: parts.bodyHash,
    [SIGNATURE_HEADER]: signature(key, parts).toString('hex'),
  };
}

/**
 * Calls other nodes' internal API, each call signed with the cluster key for its destination
 * alone. Every call is bounded by WAGW_NODE_CALL_TIMEOUT_MS: a node that is frozen (SIGSTOP, a
 * VM pause) accepts connections in its kernel but never answers, and without a bound the caller
 * would wait as long as it.
 */
export class NodeClient {
  constructor(
    private readonly key: KeyObject,
    private readonly timeoutMs: number,
  ) {}

  /** `signal` abandons the call early (its reason is kept as the cause). */
  async call(
    destination: NodeAddress,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    signal?: AbortSignal,
    timeoutMs = this.timeoutMs,
  ): Promise<NodeAnswer> {
    const text = body === undefined ? '' : JSON.stringify(body);
    const bounded = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(signal === undefined ? [] : [signal])]);
    try {
      const response = await fetch(new URL(path, destination.url), {
        method,
        headers: {
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...signedCallHeaders(this.key, destination.nodeId, method, path, text),
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
  async answers(destination: NodeAddress, timeoutMs: number): Promise<boolean> {
    try {
      await this.call(destination, 'GET', ALIVE_PATH, undefined, undefined, timeoutMs);
      return true;
    } catch {
      return false;
    }
  }
}

/** The internal route a node answers at once, touching nothing: the liveness probe. */
export const ALIVE_PATH = '/internal/alive';

/** The internal route where a node lists its periodic tasks, for `wagw cluster status` and the dashboard. */
export const TASKS_PATH = '/internal/tasks';
