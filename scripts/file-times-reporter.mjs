// A node:test reporter that writes each test file's wall time, slowest first, so that the
// suite's growth is seen (docs/development.md keeps the slowest ten of a full run). A file's
// time runs from when it leaves the queue to its last event, so it includes loading the file and, where files
// run side by side, the machine being shared with the other one.
export default async function* fileTimes(source) {
  const spans = new Map();
  for await (const event of source) {
    const file = event.data?.file;
    // A file is enqueued when the run starts; its time starts when it is taken off the queue.
    if (file === undefined || event.type === 'test:enqueue') continue;
    const now = performance.now();
    const span = spans.get(file) ?? { first: now, last: now, failed: false };
    span.last = now;
    if (event.type === 'test:fail') span.failed = true;
    spans.set(file, span);
  }
  const rows = [...spans.entries()]
    .map(([file, span]) => ({ file: file.replace(`${process.cwd()}/`, ''), seconds: (span.last - span.first) / 1000, failed: span.failed }))
    .sort((a, b) => b.seconds - a.seconds);
  yield '| seconds | file |\n|---:|---|\n';
  for (const row of rows) yield `| ${row.seconds.toFixed(1)} | ${row.file}${row.failed ? ' (failed)' : ''} |\n`;
}
