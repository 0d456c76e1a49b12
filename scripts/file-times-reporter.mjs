// A node:test reporter that writes each test file's time, slowest first, so that the suite's
// growth is seen. A file's time is the sum of its top-level tests' durations, which run one after
// another within the file; loading the file and waiting for a free worker are not counted.
//
// With WAGW_TEST_RECORD_TIMES=1 (scripts/test.sh sets it for a full run) the run also rewrites
// the slowest ten, its wall time and its test count between the file-times markers of
// docs/development.md, so the figures there always come from the run that measured them.
import fs from 'node:fs';
import os from 'node:os';

const DOCUMENT = 'docs/development.md';
const START_MARKER = '<!-- file-times:start -->';
const END_MARKER = '<!-- file-times:end -->';

export default async function* fileTimes(source) {
  const startedAt = Date.now();
  const files = new Map();
  let tests = 0;
  let failures = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.details?.type !== 'suite') {
      tests += 1;
      if (event.type === 'test:fail') failures += 1;
    }
    if (event.data.nesting !== 0 || event.data.file === undefined) continue;
    const file = files.get(event.data.file) ?? { milliseconds: 0, failed: false };
    file.milliseconds += event.data.details?.duration_ms ?? 0;
    if (event.type === 'test:fail') file.failed = true;
    files.set(event.data.file, file);
  }
  const rows = [...files.entries()]
    .map(([file, time]) => ({ file: file.replace(`${process.cwd()}/`, ''), seconds: time.milliseconds / 1000, failed: time.failed }))
    .sort((a, b) => b.seconds - a.seconds);
  const table = [
    '| seconds | file |',
    '|---:|---|',
    ...rows.map((row) => `| ${row.seconds.toFixed(1)} | ${row.file}${row.failed ? ' (failed)' : ''} |`),
  ];
  yield `${table.join('\n')}\n`;
  if (process.env.WAGW_TEST_RECORD_TIMES === '1')
    record(table.slice(0, 12), { wallMinutes: (Date.now() - startedAt) / 60_000, tests, failures, files: rows.length });
}

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
