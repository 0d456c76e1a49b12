/** When to try a failed delivery again. Pure, so that the schedule can be tested exactly. */

const JITTER_FRACTION = 0.2;

/**
 * The delay before the next attempt after `attemptsMade` attempts have failed, with ±20 %
 * jitter so that a recovering endpoint is not hit by every retry at once; null once the
 * schedule is spent and the delivery should be failed.
 */
export function retryDelayMs(
  attemptsMade: number,
  retryDelaysSeconds: readonly number[],
  random: () => number = Math.random,
): number | null {
  const baseSeconds = retryDelaysSeconds[attemptsMade - 1];
  if (baseSeconds === undefined) return null;
  const factor = 1 - JITTER_FRACTION + 2 * JITTER_FRACTION * random();
  return Math.round(baseSeconds * 1000 * factor);
}

/**
 * Honours an endpoint's Retry-After (sent with 429 or 503), but only within 1× to 2× of the
 * scheduled delay: an endpoint may slow its retries down, not speed them up or stall them.
 */
export function applyRetryAfter(scheduledMs: number, retryAfterMs: number | null): number {
  if (retryAfterMs === null) return scheduledMs;
  return Math.min(Math.max(retryAfterMs, scheduledMs), 2 * scheduledMs);
}

/** The three date forms HTTP allows: IMF-fixdate, RFC 850 and asctime. */
const HTTP_DATE_FORMATS = [
  /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/** Reads Retry-After as seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: Date): number | null {
  if (header === undefined || header.trim() === '') return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Only an HTTP date (e.g. "Sun, 22 Nov 2026 09:30:00 GMT"): Date.parse alone would read
  // "-5" or "Mar 5" as some date and turn junk into "retry now".
  if (!HTTP_DATE_FORMATS.some((format) => format.test(trimmed))) return null;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now.getTime());
}
