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
 * A file's suite. Its own concurrency of 1 is what the file's tests inherit, as they would at the
 * top of a process of their own; a describe of the file that sets its own keeps it. The time
 * limit (--test-timeout) still applies to each of the file's tests; the file and the groups
 * below have none, as their time is the sum of their tests'.
 */
function fileTest(file) {
  describe(file, { concurrency: 1, timeout: Number.POSITIVE_INFINITY }, () => import(pathToFileURL(path.resolve(file)).href));
}

describe('files that run alone', { concurrency: 1, timeout: Number.POSITIVE_INFINITY }, () => {
  for (const file of alone) fileTest(file);
});
describe('files that run side by side', { concurrency, timeout: Number.POSITIVE_INFINITY }, () => {
  for (const file of together) fileTest(file);
});
