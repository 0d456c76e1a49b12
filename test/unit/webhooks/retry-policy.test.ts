import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { applyRetryAfter, parseRetryAfter, retryDelayMs } from '../../../src/webhooks/retry-policy.ts';

const DEFAULT_RETRY_DELAYS_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
/** The largest value Math.random can return is just below 1. */
const ALMOST_ONE = 1 - Number.EPSILON;
const middle = () => 0.5;
const lowest = () => 0;
const highest = () => ALMOST_ONE;

describe('the retry schedule', () => {
  it('by default retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then gives up', () => {
    const schedule = loadConfig({}).webhooks.retryDelaysSeconds;
    assert.deepEqual([...schedule], DEFAULT_RETRY_DELAYS_SECONDS);
    const unjittered = DEFAULT_RETRY_DELAYS_SECONDS.map((_, index) => retryDelayMs(index + 1, schedule, middle));
    assert.deepEqual(unjittered, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    assert.equal(retryDelayMs(DEFAULT_RETRY_DELAYS_SECONDS.length + 1, schedule, middle), null, 'the eighth failure is final');
  });

  it('WAGW_WEBHOOK_RETRY_SCHEDULE replaces the schedule, fractions of a second included', () => {
    const schedule = loadConfig({ WAGW_WEBHOOK_RETRY_SCHEDULE: '0.5, 2,10' }).webhooks.retryDelaysSeconds;
    assert.deepEqual([...schedule], [0.5, 2, 10]);
    assert.deepEqual(
      [1, 2, 3, 4].map((attempts) => retryDelayMs(attempts, schedule, middle)),
      [500, 2_000, 10_000, null],
    );
  });

  it('a schedule that is not comma-separated seconds stops the start with a message naming the variable', () => {
    for (const raw of ['5,soon', '-1', '5;10', '1e3']) {
      assert.throws(
        () => loadConfig({ WAGW_WEBHOOK_RETRY_SCHEDULE: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.match(error.message, /WAGW_WEBHOOK_RETRY_SCHEDULE/);
          return true;
        },
        raw,
      );
    }
  });

  it('the delay after n failed attempts is the n-th entry of the schedule', () => {
    const schedule = [1, 20, 300];
    assert.equal(retryDelayMs(1, schedule, middle), 1_000);
    assert.equal(retryDelayMs(2, schedule, middle), 20_000);
    assert.equal(retryDelayMs(3, schedule, middle), 300_000);
  });

  it('once the schedule is spent there is no further attempt', () => {
    assert.equal(retryDelayMs(4, [1, 20, 300], middle), null);
    assert.equal(retryDelayMs(100, [1, 20, 300], middle), null);
    assert.equal(retryDelayMs(1, [], middle), null, 'an empty schedule means one attempt only');
  });
});

describe('retry jitter', () => {
  it('spreads each delay over exactly ±20 % of the scheduled one', () => {
    for (const [index, seconds] of DEFAULT_RETRY_DELAYS_SECONDS.entries()) {
      const scheduledMs = seconds * 1000;
      assert.equal(
        retryDelayMs(index + 1, DEFAULT_RETRY_DELAYS_SECONDS, lowest),
        Math.round(scheduledMs * 0.8),
        `attempt ${index + 1}, random() = 0`,
      );
      const top = retryDelayMs(index + 1, DEFAULT_RETRY_DELAYS_SECONDS, highest)!;
      assert.ok(top <= scheduledMs * 1.2, `attempt ${index + 1}: ${top} ms exceeds +20 %`);
      assert.ok(top >= scheduledMs * 1.2 - 1, `attempt ${index + 1}: ${top} ms falls short of the top of the range`);
    }
  });

  it('with the real random source every delay stays within the bounds and the delays differ', () => {
    const delays = Array.from({ length: 500 }, () => retryDelayMs(2, DEFAULT_RETRY_DELAYS_SECONDS)!);
    for (const delay of delays) {
      assert.ok(delay >= 240_000 && delay <= 360_000, `${delay} ms is outside 300 s ± 20 %`);
    }
    assert.ok(new Set(delays).size > 100, 'retries of many deliveries must not all land at the same moment');
  });
});

describe('Retry-After', () => {
  it('an endpoint may slow its retries down, up to twice the scheduled delay', () => {
    assert.equal(applyRetryAfter(10_000, 15_000), 15_000);
    assert.equal(applyRetryAfter(10_000, 20_000), 20_000);
    assert.equal(applyRetryAfter(10_000, 20_001), 20_000);
    assert.equal(applyRetryAfter(10_000, 86_400_000), 20_000, 'a day-long Retry-After cannot stall the delivery');
  });

  it('an endpoint cannot speed its retries up', () => {
    assert.equal(applyRetryAfter(10_000, 9_999), 10_000);
    assert.equal(applyRetryAfter(10_000, 0), 10_000);
  });

  it('without Retry-After the scheduled delay stands', () => {
    assert.equal(applyRetryAfter(10_000, null), 10_000);
  });

  it('is read as whole seconds', () => {
    const now = new Date('2025-03-01T12:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 7 ', now), 7_000);
    assert.equal(parseRetryAfter('0', now), 0);
  });

  it('is read as an HTTP date, in each of the three formats HTTP allows, relative to now', () => {
    const now = new Date('2025-03-01T12:00:00Z');
    assert.equal(parseRetryAfter('Sat, 01 Mar 2025 12:01:30 GMT', now), 90_000);
    assert.equal(parseRetryAfter('Saturday, 01-Mar-25 12:01:30 GMT', now), 90_000);
    assert.equal(parseRetryAfter('Sat Mar  1 12:01:30 2025', now), 90_000);
  });

  it('a date in the past means no wait, never a negative one', () => {
    const now = new Date('2025-03-01T12:00:00Z');
    assert.equal(parseRetryAfter('Sat, 01 Mar 2025 11:00:00 GMT', now), 0);
  });

  it('absent, empty or unreadable values are ignored', () => {
    const now = new Date('2025-03-01T12:00:00Z');
    for (const header of [undefined, '', '   ', 'soon', '12abc', '3 days', '1e3', 'Infinity']) {
      assert.equal(parseRetryAfter(header, now), null, JSON.stringify(header));
    }
  });

  it('values that are neither whole seconds nor an HTTP date are ignored rather than read as "now"', () => {
    const now = new Date('2025-03-01T12:00:00Z');
    for (const header of ['-5', '1.5', 'abc 1', 'Mar 5']) {
      assert.equal(parseRetryAfter(header, now), null, JSON.stringify(header));
    }
  });
});
