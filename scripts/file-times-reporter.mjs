// A node:test reporter that writes each test file's time, slowest first, so that the suite's
// growth is seen. A file's time is the sum of its top-level tests' durations, which run one after
// another within the file; loading the file and waiting for a free worker are not counted.
//
// A run is several test processes (scripts/test.sh), each with a report of its own; the report
// ends with a line counting its tests, and scripts/file-times-merge.mjs joins the reports into
// test-artifacts/file-times.md.

export default async function* fileTimes(source) {
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
  yield `${table.join('\n')}\n<!-- tests ${tests} failures ${failures} -->\n`;
}
