// A node:test reporter that writes each test file's time, slowest first, so that the suite's
// growth is seen (docs/development.md keeps the slowest ten of a full run). A file's time is the
// sum of its top-level tests' durations, which run one after another within the file; loading
// the file and waiting for a free worker are not counted.
export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0 || event.data.file === undefined) continue;
    const file = files.get(event.data.file) ?? { milliseconds: 0, failed: false };
    file.milliseconds += event.data.details?.duration_ms ?? 0;
    if (event.type === 'test:fail') file.failed = true;
    files.set(event.data.file, file);
  }
  const rows = [...files.entries()]
    .map(([file, time]) => ({ file: file.replace(`${process.cwd()}/`, ''), seconds: time.milliseconds / 1000, failed: time.failed }))
    .sort((a, b) => b.seconds - a.seconds);
  yield '| seconds | file |\n|---:|---|\n';
  for (const row of rows) yield `| ${row.seconds.toFixed(1)} | ${row.file}${row.failed ? ' (failed)' : ''} |\n`;
}
