// Splits test files into shards of about equal time (scripts/test-shards.sh): the slowest file
// first, each to the shard with the least time so far. A file's time comes from the last full
// run's report (test-artifacts/file-times.md), else the last fast run's, else the slowest ten that
// docs/development.md records, which a fresh checkout has too; a file in none counts as
// UNKNOWN_SECONDS.
//   node scripts/test-shard-plan.mjs <shards> <file>...   prints "<shard> <file>" lines
import fs from 'node:fs';
import { runsAlone } from './runs-alone.mjs';

// A run that has reports of its own kind names them first (WAGW_SHARD_TIMES): the fast tier's
// times are SQLite's alone, which the full run's, with both databases, overstate unevenly.
const REPORTS = [
  ...(process.env.WAGW_SHARD_TIMES ?? '').split(':').filter((report) => report !== ''),
  'test-artifacts/file-times.md',
  'test-artifacts/file-times-fast.md',
  'docs/development.md',
];
const UNKNOWN_SECONDS = 2;

const [shardCount, ...files] = process.argv.slice(2);
const seconds = new Map();
for (const report of REPORTS) {
  if (!fs.existsSync(report)) continue;
  for (const line of fs.readFileSync(report, 'utf8').split('\n')) {
    const row = /^\| ([\d.]+) \| (\S+)/.exec(line);
    if (row !== null && !seconds.has(row[2])) seconds.set(row[2], Number(row[1]));
  }
}
const timeOf = (file) => seconds.get(file.replace(/^\.\//, '')) ?? UNKNOWN_SECONDS;
// A shard runs up to WAGW_SHARD_CONCURRENCY of its files side by side and those that run alone
// one at a time (scripts/test-shard-runner.mjs), so a file takes that fraction of its time from
// its shard, or all of it.
const concurrency = Number(process.env.WAGW_SHARD_CONCURRENCY ?? '1');
const shareOf = (file) => (runsAlone(file) ? timeOf(file) : timeOf(file) / concurrency);
const shards = Array.from({ length: Number(shardCount) }, () => 0);
for (const file of [...files].sort((a, b) => shareOf(b) - shareOf(a) || a.localeCompare(b))) {
  const least = shards.indexOf(Math.min(...shards));
  shards[least] += shareOf(file);
  console.log(`${least + 1} ${file}`);
}
