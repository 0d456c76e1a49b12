// Joins the file-times reports of a run's test processes (scripts/file-times-reporter.mjs) into
// one table, slowest first:
//   node scripts/file-times-merge.mjs <output> <report>...
//
// With WAGW_TEST_RECORD_TIMES=1 (scripts/test.sh sets it for a full run) it also rewrites the
// slowest ten, the run's wall time (since WAGW_TEST_STARTED_AT, in epoch milliseconds) and its
// test count between the file-times markers of docs/development.md, so the figures there always
// come from the run that measured them.
import fs from 'node:fs';
import os from 'node:os';

const DOCUMENT = 'docs/development.md';
const START_MARKER = '<!-- file-times:start -->';
const END_MARKER = '<!-- file-times:end -->';

const [output, ...reports] = process.argv.slice(2);
const rows = [];
let tests = 0;
let failures = 0;
for (const report of reports) {
  if (!fs.existsSync(report)) continue;
  for (const line of fs.readFileSync(report, 'utf8').split('\n')) {
    const row = /^\| ([\d.]+) \| (.+) \|$/.exec(line);
    if (row !== null) rows.push({ seconds: Number(row[1]), line });
    const counts = /^<!-- tests (\d+) failures (\d+) -->$/.exec(line);
    if (counts !== null) {
      tests += Number(counts[1]);
      failures += Number(counts[2]);
    }
  }
}
rows.sort((a, b) => b.seconds - a.seconds);
const table = ['| seconds | file |', '|---:|---|', ...rows.map((row) => row.line)];
fs.writeFileSync(output, `${table.join('\n')}\n`);
const startedAt = Number(process.env.WAGW_TEST_STARTED_AT);
if (process.env.WAGW_TEST_RECORD_TIMES === '1' && Number.isFinite(startedAt))
  record(table.slice(0, 12), { wallMinutes: (Date.now() - startedAt) / 60_000, tests, failures, files: rows.length });

/** Rewrites the section of docs/development.md between the markers with this run's figures. */
function record(slowestTen, run) {
  let document;
  try {
    document = fs.readFileSync(DOCUMENT, 'utf8');
  } catch {
    return;
  }
  const start = document.indexOf(START_MARKER);
  const end = document.indexOf(END_MARKER);
  if (start < 0 || end < start) return;
  const load = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(', ');
  const outcome = run.failures === 0 ? 'all passed' : `${run.failures} failed`;
  const section = [
    START_MARKER,
    `Measured ${new Date().toISOString().slice(0, 10)} on a machine with ${os.cpus().length} cores (load average ${load} at the end): the whole run took ${run.wallMinutes.toFixed(1)} minutes of wall time, ${run.tests.toLocaleString('en')} tests in ${run.files} files, ${outcome}.`,
    '',
    ...slowestTen,
    '',
    END_MARKER,
  ].join('\n');
  fs.writeFileSync(DOCUMENT, document.slice(0, start) + section + document.slice(end + END_MARKER.length));
}
