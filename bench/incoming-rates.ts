/**
 * npm run bench:incoming-rates
 *
 * The cost curve of incoming messages: for each rate of BENCH_RATES (250,500,1000 a second),
 * a fresh `wagw serve` (compiled when dist/ is current, as an operator starts it) on a fresh
 * database takes simulated incoming messages (POST /sandbox/receive) from an open-loop load
 * process at that rate, each delivered to a webhook endpoint in a process of its own. After
 * BENCH_RATE_WARMUP_SECONDS (3) at the rate, BENCH_RATE_SECONDS (10) are measured: each
 * message's latency from when its request was due to its arrival at the endpoint (p50, p99, max),
 * the answers' p99, the gateway's CPU per message from /proc (from the first measured request
 * until the last delivery), and the most `wagw_webhook_oldest_due_age_seconds` said during the
 * run (scraped every half second): whether the gateway told that it was falling behind.
 * BENCH_DIALECTS picks the databases (sqlite); BENCH_NO_REPORT leaves docs/benchmarks.md alone.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Dialect, TestDatabase } from '../test/support/databases.ts';
import { runLoadProcess, startReceiverProcess } from './incoming-load.ts';
import {
  currentCommit,
  incomingOrder,
  machineDescription,
  percentile,
  processCpuSeconds,
  seededSendDatabase,
  startGatewayProcess,
  writeReportSection,
} from './support.ts';

const RATES = (process.env.BENCH_RATES ?? '250,500,1000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_RATE_WARMUP_SECONDS ?? 3);
const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';
/** How long the last deliveries may take after the load ends; a gateway far behind is reported, not waited for. */
const DRAIN_LIMIT_MS = 120_000;

interface RatePoint {
  dialect: Dialect;
  rate: number;
  messages: number;
  deliveryP50Ms: number;
  deliveryP99Ms: number;
  deliveryMaxMs: number;
  answerP99Ms: number;
  cpuMicroseconds: number;
  /** The largest wagw_webhook_oldest_due_age_seconds scraped during the measured seconds and the drain. */
  mostBehindSeconds: number;
  /** Scrapes of the gauge that failed (a 503 while the store is busy): samples missing from mostBehindSeconds. */
  failedScrapes: number;
  loadAverage: number;
}

async function measureRate(dialect: Dialect, rate: number): Promise<RatePoint> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `wagw-bench-rates-${dialect}-`));
  const databases: TestDatabase[] = [];
  const arrivals = new Map<string, number>();
  const receiver = await startReceiverProcess(arrivals);
  let gateway: Awaited<ReturnType<typeof startGatewayProcess>> | undefined;
  let scraper: ReturnType<typeof watchOldestDueAge> | undefined;
  try {
    const database = await seededSendDatabase(dialect, databases, undefined, receiver.url);
    gateway = await startGatewayProcess({
      databaseUrl: database.url,
      directory,
      env: {
        LOG_LEVEL: 'info',
        WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
        WAGW_SANDBOX_RECEIVES_PER_MINUTE: '100000000',
        // The per-host politeness limit (1,000 a second by default) would measure itself, not the gateway.
        WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND: '1000000',
        WAGW_METRICS_TOKEN: METRICS_TOKEN,
      },
    });
    const order = {
      port: gateway.port,
      apiKey: database.apiKey,
      toPhone: incomingOrder(gateway, database.apiKey).incomingTo,
      ratePerSecond: rate,
    };
    const warm = await runLoadProcess({ ...order, total: rate * WARMUP_SECONDS, prefix: 'warm' });
    await untilArrived(warm, arrivals);

    const cpuBefore = processCpuSeconds(gateway.pid);
    scraper = watchOldestDueAge(gateway.port);
    const load = await runLoadProcess({ ...order, total: rate * SECONDS, prefix: 'measured' });
    await untilArrived(load, arrivals);
    const cpuSeconds = processCpuSeconds(gateway.pid) - cpuBefore;
    const { mostBehindSeconds, failedScrapes } = await scraper.stop();
    const sorted = (values: number[]) => values.filter(Number.isFinite).sort((a, b) => a - b);
    const deliveries = sorted(load.map((entry) => (arrivals.get(entry.text) ?? Number.NaN) - entry.sentAt));
    const answers = sorted(load.map((entry) => entry.answeredAt - entry.sentAt));
    const point = {
      dialect,
      rate,
      messages: load.length,
      deliveryP50Ms: percentile(deliveries, 0.5),
      deliveryP99Ms: percentile(deliveries, 0.99),
      deliveryMaxMs: deliveries.at(-1) ?? Number.NaN,
      answerP99Ms: percentile(answers, 0.99),
      cpuMicroseconds: (cpuSeconds * 1e6) / load.length,
      mostBehindSeconds,
      failedScrapes,
      loadAverage: os.loadavg()[0]!,
    };
    console.log(JSON.stringify(point));
    return point;
  } finally {
    // A run that failed midway must not leave the scraper polling a stopped gateway forever.
    await scraper?.stop();
    await gateway?.stop();
    await receiver.close();
    for (const database of databases) await database.drop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** Waits until every message the load sent (and the gateway answered 200) has reached the endpoint. */
async function untilArrived(load: { text: string; status: number }[], arrivals: Map<string, number>): Promise<void> {
  const refused = load.filter((entry) => entry.status !== 200);
  if (refused.length > 0)
    throw new Error(`${refused.length} of ${load.length} incoming messages were not answered 200 (first: ${refused[0]!.status}).`);
  const deadline = Date.now() + DRAIN_LIMIT_MS;
  while (!load.every((entry) => arrivals.has(entry.text))) {
    if (Date.now() > deadline) throw new Error(`Deliveries still missing ${DRAIN_LIMIT_MS / 1000} s after the load ended.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Scrapes the gauge every half second until stopped, and answers the most it said. A failed
 * scrape is a missing sample, counted, not the end of the run: nothing awaits the loop until
 * stop(), so a rejection there would kill the process with an error unrelated to the measurement.
 */
function watchOldestDueAge(port: number): { stop(): Promise<{ mostBehindSeconds: number; failedScrapes: number }> } {
  let most = 0;
  let failed = 0;
  let running = true;
  const sample = async () => {
    try {
      most = Math.max(most, await scrapeOldestDueAge(port));
    } catch {
      failed += 1;
    }
  };
  const loop = (async () => {
    while (running) {
      await sample();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await sample();
      return { mostBehindSeconds: most, failedScrapes: failed };
    },
  };
}

function scrapeOldestDueAge(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => {
          const line = /^wagw_webhook_oldest_due_age_seconds (\S+)$/m.exec(body);
          if (response.statusCode !== 200 || line === null)
            reject(new Error(`GET /metrics answered ${response.statusCode} without the gauge`));
          else resolve(Number(line[1]));
        });
      },
    );
    request.on('error', reject);
  });
}

const points: RatePoint[] = [];
for (const dialect of (process.env.BENCH_DIALECTS?.split(',') ?? ['sqlite']) as Dialect[]) {
  for (const rate of RATES) points.push(await measureRate(dialect, rate));
}

const milliseconds = (value: number) => (value >= 1_000 ? `${(value / 1_000).toFixed(2)} s` : `${value.toFixed(1)} ms`);
const rows = points.map(
  (point) =>
    `| ${point.dialect} | ${point.rate.toLocaleString('en')} /s | ${milliseconds(point.deliveryP50Ms)} | **${milliseconds(point.deliveryP99Ms)}** | ${milliseconds(point.deliveryMaxMs)} | ${milliseconds(point.answerP99Ms)} | ${point.cpuMicroseconds.toFixed(0)} µs | ${point.mostBehindSeconds.toFixed(1)} s${point.failedScrapes > 0 ? ` (${point.failedScrapes} scrapes failed)` : ''} | ${point.loadAverage.toFixed(1)} |`,
);
const report = `## Incoming messages at set rates (\`npm run bench:incoming-rates\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.
Each rate on a fresh \`wagw serve\` and database: ${WARMUP_SECONDS} s of simulated incoming messages at the rate, then ${SECONDS} s measured, open loop (a late answer does not slow the load), each message delivered to a webhook endpoint in a process of its own.
Latency is from when a message's request was due to its arrival at the endpoint; CPU is the gateway process's, per message, from /proc, until the last delivery; "most behind" is the largest \`wagw_webhook_oldest_due_age_seconds\` scraped every half second meanwhile.

| database | rate | delivery p50 | delivery p99 | delivery max | answer p99 | CPU per message | most behind | load |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}`;
console.log(report);
if (process.env.BENCH_NO_REPORT === undefined) writeReportSection('bench:incoming-rates', report);
process.exit(0);
