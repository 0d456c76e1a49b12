import type { ProxyFailure } from './proxy-failures.ts';

/**
 * What to do when a Baileys socket closes, decided from the close's status code, or from what it
 * says of the number's proxy. Pure, so that every row of the table is a unit test. The codes are
 * WhatsApp's, as Baileys reports them in `lastDisconnect.error.output.statusCode`.
 */

export type ReconnectDecision =
  /** 401, 403: WhatsApp ended the link. Wipe the creds; only a new link brings it back. */
  | { action: 'logged_out'; reason: string }
  /** 515: WhatsApp asks for a fresh connection right after pairing; reconnect at once. */
  | { action: 'restart_now'; reason: string }
  /** 440: another client took over this session. Reconnecting blindly would fight it. */
  | { action: 'conflict'; reason: string }
  /** 408 before the number was ever linked: the QR codes ran out. */
  | { action: 'link_expired'; reason: string }
  /** Anything else: try again after `delayMs`. */
  | { action: 'retry'; delayMs: number; reason: string }
  /** Too many failures in a row: stay down until an operator restarts the number. */
  | { action: 'give_up'; reason: string };

export interface ReconnectPolicyOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  /** Spread of each delay, ±; 0.2 means 80 %–120 % of the nominal delay. */
  jitterRatio: number;
  maxConsecutiveFailures: number;
  /**
   * Failures in a row of the number's proxy before the session gives up (ADR 0063): fewer than
   * for WhatsApp, since a dead proxy is the operator's to fix and retrying only hides it.
   */
  maxProxyFailures?: number;
}

export const DEFAULT_RECONNECT_POLICY: ReconnectPolicyOptions = {
  baseDelayMs: 2_000,
  maxDelayMs: 5 * 60_000,
  jitterRatio: 0.2,
  maxConsecutiveFailures: 10,
  maxProxyFailures: 3,
};

export interface DisconnectFacts {
  statusCode: number | undefined;
  /** True until the number has completed pairing once (no `me` in the creds yet). */
  linking: boolean;
  /**
   * Whether this linking attempt showed a QR. A 408 before any QR is a connection that never
   * came up (no network), not codes that ran out, and is reported as such.
   */
  qrShown?: boolean;
  /** Failed connections in a row before this one; reset by a connection that opened. */
  consecutiveFailures: number;
  /** The number's proxy, redacted, and what the close says of it, when the proxy is what failed. */
  proxy?: { redacted: string; failure: ProxyFailure };
}

export function decideReconnect(
  facts: DisconnectFacts,
  options: ReconnectPolicyOptions = DEFAULT_RECONNECT_POLICY,
  random: () => number = Math.random,
): ReconnectDecision {
  const code = facts.statusCode;
  if (code === 401 || code === 403) return { action: 'logged_out', reason: `WhatsApp ended the session (${code}); link the number again` };
  if (code === 515) return { action: 'restart_now', reason: 'WhatsApp asked for a restart (515)' };
  if (code === 440)
    return { action: 'conflict', reason: 'another client replaced this session (440); restart it once that client is gone' };
  if (code === 408 && facts.linking && facts.qrShown !== false)
    return { action: 'link_expired', reason: 'the QR codes expired before the phone scanned one (408)' };
  if (facts.proxy !== undefined) return decideOnProxy(facts.proxy, facts.consecutiveFailures + 1, options, random);
  const failures = facts.consecutiveFailures + 1;
  const described = code === undefined ? 'the connection closed' : `the connection closed (${code})`;
  if (failures >= options.maxConsecutiveFailures) {
    return { action: 'give_up', reason: `${described}, ${failures} times in a row; an operator must restart the number` };
  }
  return { action: 'retry', delayMs: backoffDelayMs(failures, options, random), reason: described };
}

/**
 * A proxy that fails is named with what failed, and is retried a few times at most: a dead or
 * misconfigured proxy becomes `failed` with a reason an operator can act on, not a reconnect loop.
 */
function decideOnProxy(
  proxy: { redacted: string; failure: ProxyFailure },
  failures: number,
  options: ReconnectPolicyOptions,
  random: () => number,
): ReconnectDecision {
  const fix = "correct or clear the number's proxy, then restart the number";
  const { kind, detail } = proxy.failure;
  if (kind === 'credentials')
    return { action: 'give_up', reason: `the proxy ${proxy.redacted} refused its credentials (${detail}); ${fix}` };
  const described =
    kind === 'unreachable'
      ? `the proxy ${proxy.redacted} cannot be reached (${detail})`
      : `the proxy ${proxy.redacted} would not open a tunnel to WhatsApp (${detail})`;
  const limit = options.maxProxyFailures ?? DEFAULT_RECONNECT_POLICY.maxProxyFailures ?? 3;
  if (failures >= limit) return { action: 'give_up', reason: `${described}, ${failures} times in a row; ${fix}` };
  return { action: 'retry', delayMs: backoffDelayMs(failures, options, random), reason: described };
}

/** Exponential from baseDelayMs, capped at maxDelayMs, spread by ±jitterRatio so numbers do not reconnect in step. */
export function backoffDelayMs(failures: number, options: ReconnectPolicyOptions, random: () => number = Math.random): number {
  const nominal = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, failures - 1));
  const spread = 1 - options.jitterRatio + random() * 2 * options.jitterRatio;
  return Math.round(Math.min(options.maxDelayMs, nominal * spread));
}
