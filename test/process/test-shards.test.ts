import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIMIT_MS = 3_000;

/** A test file of `count` tests that each wait `waitMs`, well within the limit together. */
const slowFile = (name: string, count: number, waitMs: number) => `import { it } from 'node:test';
for (let index = 0; index < ${count}; index++)
  it('${name} step ' + index, () => new Promise((resolve) => setTimeout(resolve, ${waitMs})));
`;

/** The shard's TAP report: each test's line, and the run's counts. */
interface ShardReport {
  passed: string[];
  failed: string[];
  counts: Record<string, number>;
  log: string;
}

function runShard(logs: string, files: string[]): Promise<ShardReport> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WAGW_TEST_SHARDS: '1',
    WAGW_SHARD_CONCURRENCY: '2',
    WAGW_TEST_TIMEOUT_MS: String(LIMIT_MS),
    WAGW_SHARD_TIMES: path.join(logs, 'none.md'),
  };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  const script = 'source scripts/test-shards.sh && run_shards tap "$0" "$@"';
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script, logs, ...files], { cwd: ROOT, env, timeout: 120_000 }, (error) => {
      if (error !== null && error.code !== 1) return reject(error);
      const log = fs.readFileSync(path.join(logs, 'shard-1.log'), 'utf8');
      const names = (pattern: RegExp) => [...log.matchAll(pattern)].map((match) => match[1]!.trim());
      const counts = Object.fromEntries(names(/^# (\w+ \d+)$/gm).map((line) => [line.split(' ')[0]!, Number(line.split(' ')[1])]));
      resolve({ passed: names(/^\s*ok \d+ - (.*)$/gm), failed: names(/^\s*not ok \d+ - (.*)$/gm), counts, log });
    });
  });
}

// The shard runner (scripts/test-shard-runner.mjs) under the shard script, on files of its own.
describe('a shard of test files', () => {
  let directory: string;
  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-shard-'));
  });
  after(() => fs.rmSync(directory, { recursive: true, force: true }));

  it('a test that stalls fails alone at the limit; the files beside it pass, however long the shard runs', async () => {
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(directory, name), text);
      return path.join(directory, name);
    };
    // A stall that outlasts the limit by far, and ends (a promise that never settles, with nothing
    // else left to wait for, is reported as such on Node 22 instead of timing out).
    const stalls = write(
      'stalls.mjs',
      "import { it } from 'node:test';\nit('stalls', () => new Promise((resolve) => setTimeout(resolve, 5_000)));\n",
    );
    // Beside it, four files of a second, one after another: the shard outlasts the limit.
    const others = ['one', 'two', 'three', 'four'].map((name) => write(`${name}.mjs`, slowFile(name, 2, 500)));
    const logs = fs.mkdtempSync(path.join(directory, 'logs-'));
    const report = await runShard(logs, [stalls, ...others]);

    // The stall fails (on Node 22, its file, whose tests share the limit there), and so the
    // suites above it; every other test passes (a test cancelled unfinished would be listed as failed).
    assert.deepEqual(report.failed, ['stalls', stalls, 'files that run side by side'], report.log);
    assert.equal(report.log.match(/failureType: 'testTimeoutFailure'/g)?.length, 1, report.log);
    for (const name of ['one', 'two', 'three', 'four']) {
      for (const step of [0, 1]) assert.ok(report.passed.includes(`${name} step ${step}`), `${name} step ${step}: ${report.log}`);
    }
    assert.equal(report.counts.pass, 8, report.log);
  });
});
