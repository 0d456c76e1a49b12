import assert from 'node:assert/strict';

/**
 * How long a test waits for a condition before it fails, naming what it waited for. A condition
 * that holds within milliseconds on a quiet machine can take many seconds on a busy one (two
 * cores shared by a CPU hog and other test runs: scripts/test-busy.sh), so no wait for something
 * that will happen is cut short by a budget of its own; a condition that has not held after a
 * minute is broken, and the test's own limit (WAGW_TEST_TIMEOUT_MS) backs this one.
 */
export const CONDITION_WAIT_MS = 60_000;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Looks every `everyMs` until `probe` returns something other than undefined, and returns it;
 * fails naming `what` after CONDITION_WAIT_MS (or `waitMs`, for what is slow by nature, such as
 * another program's first start).
 */
export async function waitForValue<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  everyMs = 10,
  waitMs = CONDITION_WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${waitMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Looks every `everyMs` until `condition` holds; fails naming `what` after CONDITION_WAIT_MS. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, everyMs = 10): Promise<void> {
  await waitForValue(async () => ((await condition()) ? true : undefined), what, everyMs);
}
