// Whether a test file must run with no other file beside it in its process: it says so in a line
// of its own, `// Runs alone: <why>` (scripts/test-shard-runner.mjs).
import fs from 'node:fs';

const RUNS_ALONE = /^\/\/ Runs alone: /m;

export function runsAlone(file) {
  return RUNS_ALONE.test(fs.readFileSync(file, 'utf8'));
}
