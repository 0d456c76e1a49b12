/**
 * Named handlers for the failures a test means to let pass, so that no `.catch(() => {})` hides
 * which kind it is.
 */

/** For a test's cleanup (stopping, closing, dropping): the test has passed or failed already. */
export const ignoreCleanupFailure = (): void => undefined;

/**
 * For a write, a wait or a socket that the other side may cut off on purpose: what the test checks
 * comes after, from the server's answer.
 */
export const ignoreCutOff = (): void => undefined;
