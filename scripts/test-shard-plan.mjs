// Splits test files into shards of about equal time (scripts/test-shards.sh): the slowest file
// first, each to the shard with the least time so far. A file's time comes from the last full
// run's report (test-artifacts/file-times.md), else the last fast run's, else the slowest ten that
// docs/development.md records, which a fresh checkout has too; a file in none counts as
// UNKNOWN_SECONDS.
//   node scripts/test-shard-plan.mjs <shards> <file>...   prints "<shard> <file>" lines
import fs from 'node:fs';

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
const shards = Array.from({ length: Number(shardCount) }, () => 0);
for (const file of [...files].sort((a, b) => timeOf(b) - timeOf(a) || a.localeCompare(b))) {
  const least = shards.indexOf(Math.min(...shards));
  shards[least] += timeOf(file);
  console.log(`${least + 1} ${file}`);
}
