// A node:test reporter that writes each test file's time, slowest first, so that the suite's
// growth is seen. A file's time is the sum of its top-level tests' durations, which run one after
// another within the file, including its load under the shard runner; waiting for a free worker
// is not counted. Files that run side by side in a shard share its core, so each one's time
// includes that sharing.
//
// A run is several test processes (scripts/test.sh), each with a report of its own; the report
// ends with a line counting its tests, and scripts/file-times-merge.mjs joins the reports into
// test-artifacts/file-times.md.

import path from 'node:path';

const SHARD_RUNNER = 'scripts/test-shard-runner.mjs';

export default async function* fileTimes(source) {
  const files = new Map();
  let tests = 0;
  let failures = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const fromRunner = event.data.file?.endsWith(SHARD_RUNNER) === true;
    if (event.data.details?.type !== 'suite' && !fromRunner) {
      tests += 1;
      if (event.type === 'test:fail') failures += 1;
    }
    // Under the shard runner a file is one test (its path), one level down; run directly, a
    // file's top-level tests add up to its time.
    const name = fromRunner
      ? event.data.nesting === 1
        ? path.resolve(event.data.name)
        : undefined
      : event.data.nesting === 0
        ? event.data.file
        : undefined;
    if (name === undefined) continue;
    const file = files.get(name) ?? { milliseconds: 0, failed: false };
    file.milliseconds += event.data.details?.duration_ms ?? 0;
    if (event.type === 'test:fail') file.failed = true;
    files.set(name, file);
  }
  const rows = [...files.entries()]
    .map(([file, time]) => ({ file: file.replace(`${process.cwd()}/`, ''), seconds: time.milliseconds / 1000, failed: time.failed }))
    .sort((a, b) => b.seconds - a.seconds);
  const table = [
    '| seconds | file |',
    '|---:|---|',
    ...rows.map((row) => `| ${row.seconds.toFixed(1)} | ${row.file}${row.failed ? ' (failed)' : ''} |`),
  ];
  yield `${table.join('\n')}\n<!-- tests ${tests} failures ${failures} -->\n`;
}
