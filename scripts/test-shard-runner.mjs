// One shard's test files, in one process (scripts/test-shards.sh runs it as the shard's only
// test file). Each file becomes a suite of its own, named by its path, that imports the file: the
// file's tests become that suite's and run one after another, exactly as they would alone.
// Up to WAGW_SHARD_CONCURRENCY files run side by side, so that while one waits on a timer, a
// socket or a retry schedule, the others use the core; the process loads its modules once.
//
// A file that changes what the whole process shares (mocked timers or dates, the time zone, the
// environment) or holds the event loop for long stretches (a long synchronous check) says so in
// a line of its own, `// Runs alone: <why>`, and runs with no other file beside it.
//
// The files come in WAGW_SHARD_FILES, one path per line, in the order the shard plan gave.
import path from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { runsAlone } from './runs-alone.mjs';

const files = (process.env.WAGW_SHARD_FILES ?? '').split('\n').filter((file) => file !== '');
const concurrency = Number(process.env.WAGW_SHARD_CONCURRENCY ?? '1');
if (!Number.isInteger(concurrency) || concurrency < 1)
  throw new Error(`WAGW_SHARD_CONCURRENCY must be a whole number from 1, not ${concurrency}`);

const alone = files.filter(runsAlone);
const together = files.filter((file) => !alone.includes(file));

/**
 * What the time limit (--test-timeout, WAGW_TEST_TIMEOUT_MS) applies to: each test, and never a
 * group of files, whose time is the sum of its files' on however busy a machine. Node 24 gives
 * a suite without a timeout of its own none, and each test the command line's. Node 22 gives
 * every suite and test its parent's, down from the root's, which is the command line's: there
 * the groups take the longest timeout there is, and each file the limit, so that a file that
 * stalls fails alone. (`timeout: Infinity` takes the parent's on both, so a group of files once
 * failed after 3 minutes on a busy machine, cancelling every file of its shard still running.)
 */
const suitesInheritTimeouts = Number(process.versions.node.split('.')[0]) < 24;
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;
const testLimitMs = Number(process.env.WAGW_TEST_TIMEOUT_MS ?? '180000');
const groupOptions = suitesInheritTimeouts ? { timeout: LONGEST_TIMEOUT_MS } : {};
const fileOptions = suitesInheritTimeouts ? { timeout: testLimitMs } : {};

/**
 * A file's suite. Its own concurrency of 1 is what the file's tests inherit, as they would at the
 * top of a process of their own; a describe of the file that sets its own keeps it.
 */
function fileTest(file) {
  describe(file, { concurrency: 1, ...fileOptions }, () => import(pathToFileURL(path.resolve(file)).href));
}

describe('files that run alone', { concurrency: 1, ...groupOptions }, () => {
  for (const file of alone) fileTest(file);
});
describe('files that run side by side', { concurrency, ...groupOptions }, () => {
  for (const file of together) fileTest(file);
});
