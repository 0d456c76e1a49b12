/**
 * node --import tsx bench/soak-report.ts <csv> [--write]
 *
 * Renders a CSV of bench/soak.ts as markdown: RSS, anonymous memory, heap and event-loop delay at
 * the start and every 30 minutes, the growth per 10 minutes over the first and the last hour
 * (least squares over that hour's samples), and the full table of samples every 5 minutes.
 * Prints it; with --write it also replaces the `bench:soak` section of docs/benchmarks.md.
 */
import fs from 'node:fs';
import { writeReportSection } from './support.ts';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: node --import tsx bench/soak-report.ts <csv> [--write]');
const [header, ...lines] = fs.readFileSync(file, 'utf8').trim().split('\n');
const columns = header!.split(',');
const rows = lines.map(
  (line) => Object.fromEntries(line.split(',').map((value, index) => [columns[index]!, Number(value)])) as Record<string, number>,
);
if (rows.length === 0) throw new Error(`${file} has no samples`);

const mib = (bytes: number) => (Number.isFinite(bytes) ? (bytes / 2 ** 20).toFixed(1) : '–');
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '–');
const minutes = (seconds: number) => `${Math.round(seconds / 60)} min`;
const lastSecond = rows.at(-1)!.elapsed_s!;

/** The sample nearest to a moment. */
function at(seconds: number): Record<string, number> {
  return rows.reduce((best, row) => (Math.abs(row.elapsed_s! - seconds) < Math.abs(best.elapsed_s! - seconds) ? row : best));
}

/** The least-squares slope of a column over [from, to] seconds, in MiB per 10 minutes. */
function slopePerTenMinutes(column: string, from: number, to: number): string {
  const window = rows.filter((row) => row.elapsed_s! >= from && row.elapsed_s! <= to && Number.isFinite(row[column]));
  if (window.length < 2) return '–';
  const meanX = window.reduce((sum, row) => sum + row.elapsed_s!, 0) / window.length;
  const meanY = window.reduce((sum, row) => sum + row[column]!, 0) / window.length;
  const covariance = window.reduce((sum, row) => sum + (row.elapsed_s! - meanX) * (row[column]! - meanY), 0);
  const variance = window.reduce((sum, row) => sum + (row.elapsed_s! - meanX) ** 2, 0);
  return `${(((covariance / variance) * 600) / 2 ** 20).toFixed(2)} MiB`;
}

const milestones = [0, 30, 60, 90, 120, 150, 180].map((minute) => minute * 60).filter((second) => second <= lastSecond + 15);
if (!milestones.includes(lastSecond) && lastSecond - milestones.at(-1)! > 60) milestones.push(lastSecond);
const milestoneRow = (second: number) => {
  const row = at(second);
  return `| ${minutes(row.elapsed_s!)} | ${mib(row.rss_bytes!)} | ${mib(row.anonymous_bytes!)} | ${mib(row.file_backed_bytes!)} | ${mib(row.heap_used_bytes!)} | ${mib(row.heap_total_bytes!)} | ${mib(row.external_bytes!)} | ${ms(row.event_loop_p50_ms!)} / ${ms(row.event_loop_p99_ms!)} / ${ms(row.event_loop_max_ms!)} |`;
};
const hour = Math.min(3600, lastSecond);
const slopeColumns = [
  ['RSS', 'rss_bytes'],
  ['anonymous', 'anonymous_bytes'],
  ['heap used', 'heap_used_bytes'],
  ['external', 'external_bytes'],
] as const;
const last = rows.at(-1)!;
const everyFiveMinutes = [...new Set([...Array(Math.floor(lastSecond / 300) + 1).keys()].map((index) => at(index * 300)).concat(last))];

const markdown = `## Memory over a long run (\`npm run bench:soak\`)

${minutes(lastSecond)} at ${Math.round(last.sends_ok! / lastSecond)} sends/s and ${Math.round(last.receives_ok! / lastSecond)} incoming messages/s (each delivered to a webhook): ${last.sends_ok!.toLocaleString('en')} sends and ${last.receives_ok!.toLocaleString('en')} incoming messages answered 200, ${last.failed_requests} requests failed, ${last.webhooks_received!.toLocaleString('en')} webhook deliveries arrived; the database ended at ${mib(last.database_bytes!)} MiB.

| at | RSS MiB | anonymous MiB | file-backed MiB | heap used MiB | heap total MiB | external MiB | event-loop delay p50 / p99 / max ms |
|---|---|---|---|---|---|---|---|
${milestones.map(milestoneRow).join('\n')}

Growth per 10 minutes (least squares over the samples):

| | first hour | last hour |
|---|---|---|
${slopeColumns.map(([label, column]) => `| ${label} | ${slopePerTenMinutes(column, 0, hour)} | ${slopePerTenMinutes(column, lastSecond - hour, lastSecond)} |`).join('\n')}

<details><summary>Every 5 minutes</summary>

| at | RSS MiB | anonymous MiB | heap used MiB | external MiB | event-loop p99 ms | sends | incoming | webhooks |
|---|---|---|---|---|---|---|---|---|
${everyFiveMinutes.map((row) => `| ${minutes(row.elapsed_s!)} | ${mib(row.rss_bytes!)} | ${mib(row.anonymous_bytes!)} | ${mib(row.heap_used_bytes!)} | ${mib(row.external_bytes!)} | ${ms(row.event_loop_p99_ms!)} | ${row.sends_ok} | ${row.receives_ok} | ${row.webhooks_received} |`).join('\n')}

</details>`;

console.log(markdown);
if (process.argv.includes('--write')) writeReportSection('bench:soak', markdown);
