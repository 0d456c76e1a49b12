import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { compiledIsCurrent } from '../../../bin/build-freshness.mjs';

// Runs alone: it sets a variable of the process's environment.

/** A checkout with one source file and a build, each dated as given (seconds since the epoch). */
function checkout(dates: { source: number; built?: number; withoutSources?: boolean }): string {
  const root = mkdtempSync(path.join(tmpdir(), 'wagw-freshness-'));
  roots.push(root);
  if (!dates.withoutSources) {
    mkdirSync(path.join(root, 'src', 'cli'), { recursive: true });
    writeFileSync(path.join(root, 'src', 'cli', 'main.ts'), '');
    // Directories count too: adding or removing a file changes its directory's time.
    for (const entry of ['cli/main.ts', 'cli']) utimesSync(path.join(root, 'src', entry), dates.source, dates.source);
  }
  if (dates.built !== undefined) {
    mkdirSync(path.join(root, 'dist', 'cli'), { recursive: true });
    writeFileSync(path.join(root, 'dist', 'cli', 'main.js'), '');
    writeFileSync(path.join(root, 'dist', '.built'), '');
    utimesSync(path.join(root, 'dist', '.built'), dates.built, dates.built);
  }
  return root;
}
const roots: string[] = [];

describe('bin/wagw runs the compiled build only while it is current', () => {
  after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it('runs dist/ when it was built after every source changed', () => {
    assert.equal(compiledIsCurrent(checkout({ source: 1_000, built: 2_000 })), true);
  });

  it('runs the sources when one changed after the build, or when there is no build', () => {
    assert.equal(compiledIsCurrent(checkout({ source: 3_000, built: 2_000 })), false);
    assert.equal(compiledIsCurrent(checkout({ source: 1_000 })), false);
  });

  it('runs a build shipped without its sources', () => {
    assert.equal(compiledIsCurrent(checkout({ source: 0, built: 2_000, withoutSources: true })), true);
  });

  it('runs the sources when WAGW_RUN_SOURCES=1, whatever dist/ holds', () => {
    process.env.WAGW_RUN_SOURCES = '1';
    try {
      assert.equal(compiledIsCurrent(checkout({ source: 1_000, built: 2_000 })), false);
    } finally {
      delete process.env.WAGW_RUN_SOURCES;
    }
  });
});
