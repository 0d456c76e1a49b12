import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { unsupportedNodeMessage } from '../../bin/supported-node.mjs';

const WAGW_BIN = fileURLToPath(new URL('../../bin/wagw', import.meta.url));
const NODE_SCRIPT = fileURLToPath(new URL('../../scripts/node.sh', import.meta.url));
/** A release past its end of life, which the gateway refuses (better-sqlite3 13 crashes on it). */
const RETIRED_NODE = '20.20.2';

/**
 * The path of a Node.js below the floor: WAGW_TEST_UNSUPPORTED_NODE when CI names one (the
 * machine's own Node 20), else Node 20 from the npm registry, through the same script developers use.
 */
function unsupportedNodeBinary(): string {
  const given = process.env.WAGW_TEST_UNSUPPORTED_NODE;
  if (given !== undefined && given !== '') return given;
  return execFileSync('bash', [NODE_SCRIPT, 'bash', '-c', 'command -v node'], {
    env: { ...process.env, WAGW_NODE: RETIRED_NODE },
    encoding: 'utf8',
    timeout: 120_000,
  }).trim();
}

describe('the supported Node.js releases', () => {
  it('accepts 22.12 and later, and refuses older releases in one line that names the floor', () => {
    for (const version of ['22.12.0', '22.23.3', '23.0.0', '24.21.0', '26.1.0'])
      assert.equal(unsupportedNodeMessage(version), null, version);
    for (const version of ['20.20.2', '20.19.0', '22.11.0', '18.20.8']) {
      const message = unsupportedNodeMessage(version);
      assert.ok(message !== null, version);
      assert.match(message, /needs Node\.js 22\.12 or later/);
      assert.ok(message.includes(`this is Node.js ${version}`), message);
      assert.doesNotMatch(message, /\n/);
    }
  });

  it('wagw started on a retired Node.js exits 1 with the one-line refusal, before loading anything', async () => {
    const node = unsupportedNodeBinary();
    const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    assert.ok(unsupportedNodeMessage(version) !== null, `${node} is ${version}, which is supported: the test needs an older release`);
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    delete env.NODE_OPTIONS;
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(node, [WAGW_BIN, 'serve'], { env, encoding: 'utf8', timeout: 60_000 }, (_error, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, `${unsupportedNodeMessage(version)}\n`);
  });
});
