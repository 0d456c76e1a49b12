/**
 * npm run bench:soak
 *
 * Memory over a long run: `wagw serve` in its own process on SQLite with the sandbox engine,
 * under a steady, moderate load for BENCH_SOAK_MINUTES (120 by default):
 * - BENCH_SOAK_SENDS_PER_SECOND (100) sends to phones outside the gateway;
 * - BENCH_SOAK_RECEIVES_PER_SECOND (50) simulated incoming messages (POST /sandbox/receive), each
 *   delivered by the webhook worker to a local endpoint in this process.
 * Every BENCH_SOAK_SAMPLE_SECONDS (30) one line is appended to the CSV (BENCH_SOAK_CSV, by default
 * soak-<date>.csv in the run's directory): the server's own figures from its /metrics (heap,
 * external memory, event-loop delay since the previous scrape), its RSS from /proc/<pid>/status,
 * and the anonymous and file-backed parts of its memory from /proc/<pid>/smaps_rollup, where
 * native allocations (SQLite's page cache, buffers outside the heap) show as anonymous memory
 * that the heap figures do not explain. `node --import tsx bench/soak-report.ts <csv>` renders it.
 *
 * The soak is a benchmark, not a test: it reports and does not judge.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { accountScope, operatorScope } from '../src/domain/tenant-scope.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { BENCH_SECRET_KEY, currentCommit, machineDescription, startGatewayProcess } from './support.ts';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 120);
const SENDS_PER_SECOND = Number(process.env.BENCH_SOAK_SENDS_PER_SECOND ?? 100);
const RECEIVES_PER_SECOND = Number(process.env.BENCH_SOAK_RECEIVES_PER_SECOND ?? 50);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 30);
const METRICS_TOKEN = 'soak-metrics-token-0123456789';
const SENDER = '+447700900001';
const TICK_MS = 10;

const SOAK_COLUMNS = [
  'elapsed_s',
  'rss_bytes',
  'anonymous_bytes',
  'file_backed_bytes',
  'heap_used_bytes',
  'heap_total_bytes',
  'external_bytes',
  'array_buffers_bytes',
  'event_loop_p50_ms',
  'event_loop_p99_ms',
  'event_loop_max_ms',
  'sends_ok',
  'receives_ok',
  'failed_requests',
  'webhooks_received',
  'database_bytes',
] as const;

const directory = process.env.BENCH_SOAK_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-soak-'));
fs.mkdirSync(directory, { recursive: true });
const csvFile = process.env.BENCH_SOAK_CSV ?? path.join(directory, `soak-${new Date().toISOString().slice(0, 19).replaceAll(':', '')}.csv`);
const databaseFile = path.join(directory, 'wagw.db');
fs.rmSync(databaseFile, { force: true });

const counts = { sendsOk: 0, receivesOk: 0, failed: 0, webhooks: 0 };
const receiver = http.createServer((request, response) => {
  request.resume();
  request.once('end', () => {
    counts.webhooks += 1;
    response.writeHead(204).end();
  });
});
receiver.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

const environment = {
  LOG_LEVEL: 'info',
  WAGW_METRICS_TOKEN: METRICS_TOKEN,
  WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
  WAGW_SANDBOX_RECEIVES_PER_MINUTE: String(RECEIVES_PER_SECOND * 60 * 10),
};
const apiKey = await seed();
const gateway = await startGatewayProcess({ databaseUrl: `sqlite:${databaseFile}`, directory, env: environment });
console.log(
  JSON.stringify({
    csv: csvFile,
    directory,
    pid: gateway.pid,
    port: gateway.port,
    minutes: MINUTES,
    commit: currentCommit(),
    machine: machineDescription(),
  }),
);

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
let recipient = 0;
function post(pathname: string, body: object, onOk: () => void): void {
  const payload = JSON.stringify(body);
  const request = http.request(
    {
      host: '127.0.0.1',
      port: gateway.port,
      path: pathname,
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    },
    (response) => {
      response.resume();
      response.once('end', () => {
        if (response.statusCode === 200) onOk();
        else counts.failed += 1;
      });
    },
  );
  request.once('error', () => (counts.failed += 1));
  request.end(payload);
}
const sendOne = () =>
  post(
    '/send_message',
    { from_phone: SENDER, to_phone: `+4477009${10_000 + (recipient++ % 90_000)}`, message: `soak send ${recipient}` },
    () => (counts.sendsOk += 1),
  );
const receiveOne = () =>
  post(
    '/sandbox/receive',
    { from_phone: `+4477009${10_000 + (recipient++ % 90_000)}`, to_phone: SENDER, message: `soak receive ${recipient}` },
    () => (counts.receivesOk += 1),
  );

// Open loop: whatever is due by now goes out now, so a slow server is not given a rest.
const started = performance.now();
let sendsIssued = 0;
let receivesIssued = 0;
const load = setInterval(() => {
  const seconds = (performance.now() - started) / 1000;
  for (; sendsIssued < seconds * SENDS_PER_SECOND; sendsIssued++) sendOne();
  for (; receivesIssued < seconds * RECEIVES_PER_SECOND; receivesIssued++) receiveOne();
}, TICK_MS);

fs.writeFileSync(csvFile, `${SOAK_COLUMNS.join(',')}\n`);
await appendSample(0);
const endAt = started + MINUTES * 60_000;
while (performance.now() < endAt) {
  await new Promise((resolve) => setTimeout(resolve, Math.min(SAMPLE_SECONDS * 1000, endAt - performance.now())));
  await appendSample(Math.round((performance.now() - started) / 1000));
}
clearInterval(load);
await new Promise((resolve) => setTimeout(resolve, 2_000));
agent.destroy();
await gateway.stop();
receiver.close();
console.log(JSON.stringify({ done: true, csv: csvFile, ...counts, render: `node --import tsx bench/soak-report.ts ${csvFile}` }));
process.exit(0);

/** An enterprise account (no monthly limit) with one sandbox number, a webhook and an API key. */
async function seed(): Promise<string> {
  const config = loadConfig({
    DATABASE_URL: `sqlite:${databaseFile}`,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: BENCH_SECRET_KEY,
    WAGW_DATA_DIR: directory,
    WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const seeding = await createGateway(config, createLogger(config));
  try {
    const account = await seeding.accounts.createAccount({ name: 'soak', plan: 'enterprise' });
    await seeding.numbers.addNumber(operatorScope(), { accountId: account.id, phone: SENDER });
    await seeding.webhooks.createWebhook(accountScope(account.id), { url: receiverUrl, eventTypes: ['message'] });
    return (await seeding.apiKeys.createKey({ accountId: account.id, name: 'soak' })).plaintext;
  } finally {
    await seeding.close();
  }
}

async function appendSample(elapsedSeconds: number): Promise<void> {
  const metrics = await scrapeMetrics();
  const status = readProcFile(`/proc/${gateway.pid}/status`);
  const rollup = readProcFile(`/proc/${gateway.pid}/smaps_rollup`);
  const ms = (name: string) => (metrics.get(name) ?? Number.NaN) * 1000;
  const row = [
    elapsedSeconds,
    kibibytes(status, 'VmRSS'),
    kibibytes(rollup, 'Anonymous'),
    kibibytes(status, 'RssFile') + kibibytes(status, 'RssShmem'),
    metrics.get('wagw_nodejs_heap_size_used_bytes') ?? Number.NaN,
    metrics.get('wagw_nodejs_heap_size_total_bytes') ?? Number.NaN,
    metrics.get('wagw_nodejs_external_memory_bytes') ?? Number.NaN,
    // prom-client does not export process.memoryUsage().arrayBuffers; the column stays for when it does.
    metrics.get('wagw_nodejs_array_buffers_bytes') ?? Number.NaN,
    ms('wagw_nodejs_eventloop_lag_p50_seconds').toFixed(2),
    ms('wagw_nodejs_eventloop_lag_p99_seconds').toFixed(2),
    ms('wagw_nodejs_eventloop_lag_max_seconds').toFixed(2),
    counts.sendsOk,
    counts.receivesOk,
    counts.failed,
    counts.webhooks,
    databaseBytes(),
  ];
  fs.appendFileSync(csvFile, `${row.join(',')}\n`);
  console.log(Object.fromEntries(SOAK_COLUMNS.map((column, index) => [column, row[index]])));
}

/** The gauges of the gateway's /metrics, unlabelled ones only. */
async function scrapeMetrics(): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  try {
    const response = await fetch(`http://127.0.0.1:${gateway.port}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      signal: AbortSignal.timeout(10_000),
    });
    for (const line of (await response.text()).split('\n')) {
      const match = /^([a-z0-9_]+) ([0-9.e+-]+)$/.exec(line);
      if (match !== null) values.set(match[1]!, Number(match[2]));
    }
  } catch (error) {
    console.error('the metrics scrape failed', error);
  }
  return values;
}

function readProcFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A "Name:   123 kB" field of a /proc file, in bytes; NaN where it is missing. */
function kibibytes(text: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match === null ? Number.NaN : Number(match[1]) * 1024;
}

function databaseBytes(): number {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      total += fs.statSync(databaseFile + suffix).size;
    } catch {
      // The write-ahead log may be absent between checkpoints.
    }
  }
  return total;
}
