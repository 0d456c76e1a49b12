import { accountScope, operatorScope } from '../src/domain/tenant-scope.ts';
/**
 * npm run bench:webhooks
 *
 * 1. Incoming (sandbox) → received by a local endpoint: p50 and p99 at a fixed 1,000 messages/s, cold (the first 10 s after a start) and warm,
 *    driven over real HTTP against a listening gateway.
 * 2. The most deliveries per second the worker sustains: a backlog is queued with the worker
 *    stopped, then drained against a fast local endpoint.
 * 3. Isolation: a healthy endpoint's drain rate alone, against the same with a second account's
 *    endpoint that never answers taking an equal share of the backlog at the same time.
 * All on SQLite and on PostgreSQL (WAGW_TEST_POSTGRES_URL, which `npm run bench:webhooks` sets).
 * BENCH_DIALECTS=sqlite and BENCH_PHASES=isolation narrow a run down while working on one part;
 * WAGW_SQLITE_COMMIT_SYNC is handed to the gateway, and BENCH_NO_REPORT leaves the report alone.
 * The gateway runs in the benchmark's process (each latency round in a fresh one): compiled
 * (dist/, what `npm start` runs) when dist/ is current, else the sources through tsx;
 * BENCH_SOURCES=1 chooses the sources. BENCH_CPU_PROFILE_DIR writes a CPU profile of each round's
 * cold seconds there; BENCH_TIMELINE=1 prints each second's latencies (all, to the 200, and from it
 * to the delivery) and the attempts' outcomes; BENCH_RATE lowers the rate.
 */
import path from 'node:path';
import { compiledIsCurrent } from '../bin/build-freshness.mjs';
import type { Gateway } from '../src/main.ts';
import { incomingMessagePayload } from '../src/domain/event-payloads.ts';
import { newId } from '../src/domain/ids.ts';
import type { Message } from '../src/domain/model.ts';
import type { E164 } from '../src/domain/phone.ts';
import { CLAIMS_ONLY, enqueueEvent } from '../src/webhooks/outbox.ts';
import { createTestDatabase, type Dialect } from '../test/support/databases.ts';
import { fork } from 'node:child_process';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { sql } from 'kysely';
import { currentCommit, machineDescription, percentile, startCpuProfile, writeReportSection } from './support.ts';
import { runLoadProcess, startReceiverProcess, type LoadReport } from './incoming-load.ts';

// Cold figures are the product's only if the product's code runs: what tsx compiles is not what
// `npm start` runs, and a module imported lazily costs tsx a transform on first use.
const runsCompiled = process.env.BENCH_SOURCES === undefined && compiledIsCurrent(path.resolve('.'));
const gatewayModules = runsCompiled ? '../dist' : '../src';
const extension = runsCompiled ? 'js' : 'ts';
const { loadConfig } = (await import(`${gatewayModules}/config.${extension}`)) as typeof import('../src/config.ts');
const { startServer } = (await import(`${gatewayModules}/server.${extension}`)) as typeof import('../src/server.ts');
const { createGateway, createLogger } = (await import(`${gatewayModules}/main.${extension}`)) as typeof import('../src/main.ts');

/** BENCH_RATE lowers it, to compare runs on a machine too busy to keep up with the target's rate. */
const RATE_PER_SECOND = Number(process.env.BENCH_RATE ?? process.env.BENCH_INCOMING_PER_SECOND ?? 1_000);
/** The first seconds after a start, measured as they come: the cold figures. */
const COLD_SECONDS = 10;
/** Then, on the same gateway, the warm figures. */
const LATENCY_SECONDS = 5;
const LATENCY_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BACKLOG = 20_000;
/** Per endpoint; large enough that the hung requests time out and are retried during a drain. */
const ISOLATION_BACKLOG = Number(process.env.BENCH_ISOLATION_BACKLOG ?? 30_000);
/** Baseline and hanging runs alternate, so that drift on a shared machine hits both alike. */
const ISOLATION_ROUNDS = Number(process.env.BENCH_ISOLATION_ROUNDS ?? 3);
const ISOLATION_TARGET = 0.95;
const DEFAULTS = loadConfig({}).webhooks;

interface LatencyResult {
  /** The same figures over the first COLD_SECONDS after the gateway started. */
  cold: { answerP99Ms: number; p50Ms: number; p99Ms: number };
  /** From the request to its 200: the durable commit of the message with its deliveries. */
  answerP50Ms: number;
  answerP99Ms: number;
  p50Ms: number;
  p99Ms: number;
  latencyMessages: number;
  deliveriesPerSecond: number;
  /** The machine's 1-minute load average at the end of the latency run and of the drain. */
  latencyLoad: number;
  drainLoad: number;
}

interface IsolationResult {
  baselinePerSecond: number[];
  withHangingPerSecond: number[];
  /** The gateway's CPU time per healthy delivery: steadier than rates on a shared machine. */
  baselineCpuMicroseconds: number[];
  withHangingCpuMicroseconds: number[];
  /** Requests the hanging endpoint received and held, and the most it held at once. */
  hungRequests: number;
  mostHungAtOnce: number;
  ratio: number;
}

interface Result {
  dialect: Dialect;
  /** One per round, each on a fresh gateway and database. */
  latency?: LatencyResult[];
  isolation?: IsolationResult;
}

interface BenchGateway {
  gateway: Gateway;
  /** Drops the database; the gateway must be closed first. */
  drop(): Promise<void>;
}

async function benchGateway(dialect: Dialect): Promise<BenchGateway> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
    WAGW_SECRET_KEY: '5e'.repeat(32),
    // The per-host politeness limit (1,000 a second by default) would measure itself, not the worker.
    WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND: '1000000',
    // The sandbox's own abuse limit on simulated incoming messages would refuse the load.
    WAGW_SANDBOX_RECEIVES_PER_MINUTE: '10000000',
    // Where SQLite's commits sync their log, to measure both ways (ADR 0037).
    WAGW_SQLITE_COMMIT_SYNC: process.env.WAGW_SQLITE_COMMIT_SYNC,
  });
  const gateway = await createGateway(config, createLogger(config));
  return { gateway, drop: () => database.drop() };
}

interface Share {
  accountId: string;
  numberId: string;
  phone: E164;
}

/** An account with one sandbox number and one `message` webhook pointing at `url`. */
async function accountWithWebhook(gateway: Gateway, name: string, phone: string, url: string): Promise<Share> {
  const account = await gateway.accounts.createAccount({ name, plan: 'enterprise' });
  const number = await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone });
  await gateway.webhooks.createWebhook(accountScope(account.id), { url, eventTypes: ['message'] });
  return { accountId: account.id, numberId: number.id, phone: number.phone };
}

/**
 * Queues `count` incoming messages for each share, interleaved, through the outbox as the
 * receive path does, so the deliveries of all shares come due side by side.
 */
async function queueBacklog(gateway: Gateway, shares: Share[], count: number): Promise<void> {
  for (let offset = 0; offset < count; offset += 500) {
    await gateway.committer.run(async (trx) => {
      for (let index = offset; index < Math.min(count, offset + 500); index++) {
        for (const share of shares) {
          const message: Message = {
            id: newId('message'),
            accountId: share.accountId,
            numberId: share.numberId,
            direction: 'inbound',
            fromPhone: '+14155550100' as E164,
            fromLid: null,
            toPhone: share.phone,
            text: `backlog-${index}`,
            contentKind: 'text',
            mediaId: null,
            structured: null,
            status: 'received',
            engineMessageId: null,
            createdAt: new Date(),
          };
          await enqueueEvent(trx, CLAIMS_ONLY, share.accountId, incomingMessagePayload(message), message.createdAt);
        }
      }
    });
  }
}

/**
 * `seconds` of incoming messages at RATE_PER_SECOND; each one's latency to its 200 and to its
 * delivery at the endpoint, sorted.
 */
async function openLoopLatencies(
  port: number,
  apiKey: string,
  toPhone: string,
  arrivals: Map<string, number>,
  prefix: string,
  seconds: number,
): Promise<{ answers: number[]; deliveries: number[] }> {
  const load = await runLoadProcess({ port, apiKey, toPhone, ratePerSecond: RATE_PER_SECOND, total: RATE_PER_SECOND * seconds, prefix });
  const statuses = new Map<number, number>();
  for (const entry of load) statuses.set(entry.status, (statuses.get(entry.status) ?? 0) + 1);
  progress = () =>
    `${prefix}: answers ${JSON.stringify([...statuses])}, arrived ${load.filter((entry) => arrivals.has(entry.text)).length}`;
  await waitUntil(() => load.every((entry) => arrivals.has(entry.text)), 30_000);
  const sorted = (values: number[]) => values.filter(Number.isFinite).sort((a, b) => a - b);
  if (process.env.BENCH_TIMELINE !== undefined) printTimeline(prefix, load, arrivals);
  return {
    answers: sorted(load.map((entry) => entry.answeredAt - entry.sentAt)),
    deliveries: sorted(load.map((entry) => (arrivals.get(entry.text) ?? Number.NaN) - entry.sentAt)),
  };
}

async function latencyAndThroughput(dialect: Dialect): Promise<LatencyResult> {
  const { gateway, drop } = await benchGateway(dialect);
  const arrivals = new Map<string, number>();
  const receiver = await startReceiverProcess(arrivals);
  const share = await accountWithWebhook(gateway, 'bench', '+447700900001', receiver.url);
  const key = await gateway.apiKeys.createKey({ accountId: share.accountId });
  const server = await startServer(gateway);
  const port = Number(new URL(server.address).port);

  // Phase 1: open-loop load at a fixed rate from another process; latency runs from just
  // before the request to the moment the endpoint has the delivery. First the cold seconds right
  // after the start, then the warm ones on the same gateway.
  // The gateway runs in this process: its cold window's profile, when BENCH_CPU_PROFILE_DIR asks for one.
  const profiler = await startCpuProfile();
  const cold = await openLoopLatencies(port, key.plaintext, share.phone, arrivals, 'cold', COLD_SECONDS);
  await profiler?.stop(`cold-${dialect}`);
  if (process.env.BENCH_TIMELINE !== undefined) {
    const failed = await sql<{ error: string | null; status_code: number | null; n: number; slowest: number }>`
      select error, status_code, count(*) as n, max(duration_ms) as slowest from webhook_attempts
      group by error, status_code`.execute(gateway.store.db);
    console.log('cold attempts', JSON.stringify(failed.rows));
  }
  const warm = await openLoopLatencies(port, key.plaintext, share.phone, arrivals, 'warm', LATENCY_SECONDS);
  const latencyLoad = os.loadavg()[0]!;

  // Phase 2: a backlog drained by the worker alone.
  await gateway.deliveryWorker.stop();
  arrivals.clear();
  await queueBacklog(gateway, [share], BACKLOG);
  const drainStarted = performance.now();
  gateway.deliveryWorker.start();
  progress = () => `arrived ${arrivals.size} of ${BACKLOG}`;
  await waitUntil(() => arrivals.size >= BACKLOG, 120_000);
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  const drainLoad = os.loadavg()[0]!;

  // Stopping the server closes the gateway too.
  await server.stop();
  await receiver.close();
  await drop();
  return {
    cold: {
      answerP99Ms: percentile(cold.answers, 0.99),
      p50Ms: percentile(cold.deliveries, 0.5),
      p99Ms: percentile(cold.deliveries, 0.99),
    },
    answerP50Ms: percentile(warm.answers, 0.5),
    answerP99Ms: percentile(warm.answers, 0.99),
    p50Ms: percentile(warm.deliveries, 0.5),
    p99Ms: percentile(warm.deliveries, 0.99),
    latencyMessages: warm.deliveries.length,
    deliveriesPerSecond: BACKLOG / drainSeconds,
    latencyLoad,
    drainLoad,
  };
}

/**
 * One drain of the healthy account's backlog, alone or with the hanging account's equal share
 * queued alongside it. Both accounts and webhooks exist in either case, so the runs differ only
 * in the hanging endpoint's traffic.
 */
async function healthyDrain(
  dialect: Dialect,
  withHanging: boolean,
): Promise<{ perSecond: number; cpuMicroseconds: number; hungRequests: number; mostHungAtOnce: number }> {
  const { gateway, drop } = await benchGateway(dialect);
  const arrivals = new Map<string, number>();
  const healthy = await startReceiverProcess(arrivals);
  const hanging = await startReceiverProcess(new Map(), 'hang');
  const healthyShare = await accountWithWebhook(gateway, 'healthy', '+447700900011', healthy.url);
  const hangingShare = await accountWithWebhook(gateway, 'hanging', '+447700900012', hanging.url);
  await queueBacklog(gateway, withHanging ? [hangingShare, healthyShare] : [healthyShare], ISOLATION_BACKLOG);
  await settleAfterQueueing(gateway, dialect);

  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  gateway.deliveryWorker.start();
  progress = () => `healthy endpoint has ${arrivals.size} of ${ISOLATION_BACKLOG}; hanging endpoint holds ${JSON.stringify(hanging.stats)}`;
  await waitUntil(() => arrivals.size >= ISOLATION_BACKLOG, 300_000);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const { hungRequests, mostHungAtOnce } = hanging.stats;

  await gateway.close();
  await drop();
  await healthy.close();
  await hanging.close();
  return {
    perSecond: ISOLATION_BACKLOG / seconds,
    cpuMicroseconds: (cpu.user + cpu.system) / ISOLATION_BACKLOG,
    hungRequests,
    mostHungAtOnce,
  };
}

/**
 * Queueing the hanging endpoint's share as well leaves twice the write-ahead log and twice the
 * garbage behind; left alone, checkpointing and collecting them would land in that run's drain.
 * Both runs therefore start from a checkpointed database and a collected heap. Autovacuum would
 * also have analysed a table this size in a running PostgreSQL; whether it got to it before one
 * run and not another would decide the plans, so both runs start analysed.
 */
async function settleAfterQueueing(gateway: Gateway, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`analyze`.execute(gateway.store.db);
    await sql`checkpoint`.execute(gateway.store.db);
  } else {
    await sql`pragma wal_checkpoint(truncate)`.execute(gateway.store.db);
  }
  collectGarbage();
}

async function isolation(dialect: Dialect): Promise<IsolationResult> {
  const baselinePerSecond: number[] = [];
  const withHangingPerSecond: number[] = [];
  const baselineCpuMicroseconds: number[] = [];
  const withHangingCpuMicroseconds: number[] = [];
  let hungRequests = 0;
  let mostHungAtOnce = 0;
  for (let round = 0; round < ISOLATION_ROUNDS; round++) {
    const baseline = await healthyDrain(dialect, false);
    baselinePerSecond.push(baseline.perSecond);
    baselineCpuMicroseconds.push(baseline.cpuMicroseconds);
    const loaded = await healthyDrain(dialect, true);
    withHangingPerSecond.push(loaded.perSecond);
    withHangingCpuMicroseconds.push(loaded.cpuMicroseconds);
    hungRequests += loaded.hungRequests;
    mostHungAtOnce = Math.max(mostHungAtOnce, loaded.mostHungAtOnce);
    console.log(
      JSON.stringify({
        dialect,
        round,
        baseline: Math.round(baseline.perSecond),
        withHanging: Math.round(loaded.perSecond),
        baselineCpuMicroseconds: Math.round(baseline.cpuMicroseconds),
        withHangingCpuMicroseconds: Math.round(loaded.cpuMicroseconds),
        hung: loaded.hungRequests,
        mostHungAtOnce: loaded.mostHungAtOnce,
      }),
    );
  }
  return {
    baselinePerSecond,
    withHangingPerSecond,
    baselineCpuMicroseconds,
    withHangingCpuMicroseconds,
    hungRequests,
    mostHungAtOnce,
    ratio: sum(withHangingPerSecond) / sum(baselinePerSecond),
  };
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/**
 * Each second's messages (by when they were sent): to the delivery, to the 200, and from the 200
 * to the delivery, which is the webhook worker's part alone.
 */
function printTimeline(prefix: string, load: LoadReport[], arrivals: Map<string, number>): void {
  const first = Math.min(...load.map((entry) => entry.sentAt));
  const bySecond = new Map<number, LoadReport[]>();
  for (const entry of load) {
    const second = Math.floor((entry.sentAt - first) / 1000);
    bySecond.set(second, [...(bySecond.get(second) ?? []), entry]);
  }
  const figures = (values: number[]) => {
    const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
    return `p50 ${percentile(sorted, 0.5).toFixed(1)} p99 ${percentile(sorted, 0.99).toFixed(1)} max ${sorted.at(-1)?.toFixed(1)}`;
  };
  for (const [second, entries] of bySecond) {
    const arrived = (entry: LoadReport) => arrivals.get(entry.text) ?? Number.NaN;
    console.log(
      `${prefix} second ${second}: ${figures(entries.map((entry) => arrived(entry) - entry.sentAt))}; ` +
        `answer ${figures(entries.map((entry) => entry.answeredAt - entry.sentAt))}; ` +
        `answer to delivery ${figures(entries.map((entry) => arrived(entry) - entry.answeredAt))}`,
    );
  }
}

let progress = () => '';

// The benchmark runs without --expose-gc (npm run bench starts it plainly), so it asks V8 itself.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`The benchmark timed out waiting for deliveries (${progress()}).`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * One latency round in a process of its own: a gateway started in a process where an earlier
 * round's gateway ran would find V8's optimised code and the compiled schemas already there,
 * and its "cold" seconds would be warm.
 */
async function latencyInFreshProcess(dialect: Dialect): Promise<LatencyResult> {
  const child = fork(new URL(import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_LATENCY_ROUND_OF: dialect },
  });
  return new Promise<LatencyResult>((resolve, reject) => {
    child.once('message', (result: LatencyResult) => resolve(result));
    child.once('exit', (code) => reject(new Error(`the latency round's process ended (${code}) without a result`)));
  });
}

const roundOf = process.env.BENCH_LATENCY_ROUND_OF as Dialect | undefined;
if (roundOf !== undefined) {
  process.send!(await latencyAndThroughput(roundOf));
  process.exit(0);
}

const phases = process.env.BENCH_PHASES?.split(',') ?? ['latency', 'isolation'];
const results: Result[] = [];
for (const dialect of (process.env.BENCH_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as Dialect[]) {
  const result: Result = { dialect };
  if (phases.includes('latency')) {
    result.latency = [];
    for (let round = 0; round < LATENCY_ROUNDS; round++) {
      const measured = await latencyInFreshProcess(dialect);
      result.latency.push(measured);
      console.log(JSON.stringify({ dialect, round, ...measured }));
    }
  }
  if (phases.includes('isolation')) result.isolation = await isolation(dialect);
  results.push(result);
}
if (process.env.BENCH_NO_REPORT === undefined) writeReport(results);
process.exit(0);

function writeReport(all: Result[]): void {
  const perSecond = (value: number) => `${Math.round(value).toLocaleString('en')} /s`;
  const spread = (values: number[], format: (value: number) => string) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${format(sorted[0]!)} / **${format(sorted[Math.floor((sorted.length - 1) / 2)]!)}** / ${format(sorted[sorted.length - 1]!)}`;
  };
  const ms = (value: number) => value.toFixed(1);
  const latencyRow = ({ dialect, latency: rounds }: Result) =>
    rounds &&
    `| ${dialect} | ${spread(
      rounds.map((l) => l.answerP99Ms),
      ms,
    )} ms | ${spread(
      rounds.map((l) => l.p50Ms),
      ms,
    )} ms | ${spread(
      rounds.map((l) => l.p99Ms),
      ms,
    )} ms | ${spread(
      rounds.map((l) => l.cold.p50Ms),
      ms,
    )} ms | ${spread(
      rounds.map((l) => l.cold.p99Ms),
      ms,
    )} ms | ${spread(
      rounds.map((l) => l.deliveriesPerSecond),
      perSecond,
    )} | ${rounds.map((l) => `${l.latencyLoad.toFixed(1)} / ${l.drainLoad.toFixed(1)}`).join(', ')} |`;
  const microseconds = (values: number[]) => `${Math.round(sum(values) / values.length)} µs`;
  const isolationRow = ({ dialect, isolation: i }: Result) =>
    i &&
    `| ${dialect} | ${i.baselinePerSecond.map(perSecond).join(', ')} | ${i.withHangingPerSecond.map(perSecond).join(', ')} | **${(i.ratio * 100).toFixed(1)} %** | ${i.ratio >= ISOLATION_TARGET ? 'yes' : 'no'} | ${microseconds(i.baselineCpuMicroseconds)} / ${microseconds(i.withHangingCpuMicroseconds)} | ${i.hungRequests} (${i.mostHungAtOnce} at once) |`;
  writeReportSection(
    'bench:webhooks',
    `## Webhook delivery (\`npm run bench:webhooks\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}, the gateway ${runsCompiled ? 'compiled (dist/)' : 'from its sources through tsx'}.
The load generator and the endpoints each run in a process of their own; all share the machine's two cores with the gateway and, for PostgreSQL, its server.

Min / **median** / max over ${LATENCY_ROUNDS} rounds, each on a fresh gateway and database: ${COLD_SECONDS} s of incoming messages at ${RATE_PER_SECOND}/s from its start (cold), then ${LATENCY_SECONDS} s more (warm), then the drain:

| database | warm: incoming 200, p99 | warm: incoming → endpoint p50 at ${RATE_PER_SECOND}/s | warm p99 | cold (first ${COLD_SECONDS} s): p50 | cold p99 | sustained deliveries | load average (latency / drain) per round |
|---|---|---|---|---|---|---|---|
${all.map(latencyRow).filter(Boolean).join('\n')}

Targets (issues 13 and 31): incoming → endpoint p50 ≤ 10 ms and p99 ≤ 50 ms at 1,000 messages/s warm, p99 ≤ 500 ms cold; drain
≥ 6,000 deliveries/s on SQLite and ≥ 4,000/s on PostgreSQL. The per-host rate limit
(\`WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND\`, 1,000 by default) and the sandbox's limit on simulated
incoming messages are raised for the run, so that they do not measure themselves.
Latency runs from just before \`POST /sandbox/receive\` to the endpoint having the signed delivery:
it includes the durable commit of the message with its delivery, the worker's wake-up, signing
and the HTTP request. Throughput drains a backlog of ${BACKLOG.toLocaleString('en')} queued deliveries with the
default concurrency (${DEFAULTS.maxInFlight} in flight, ${DEFAULTS.maxInFlightPerEndpoint} per endpoint) to one endpoint.

### A hanging endpoint beside a healthy one

| database | healthy endpoint alone | with the hanging endpoint | ratio | ≥ ${ISOLATION_TARGET * 100} %? | gateway CPU per healthy delivery, alone / with | requests the hanging endpoint held |
|---|---|---|---|---|---|---|
${all.map(isolationRow).filter(Boolean).join('\n')}

Two accounts, each with one webhook: one endpoint answers 204 at once, the other reads each
request and never answers, so every request to it lasts the gateway's full timeout
(${DEFAULTS.timeoutMs / 1000} s, the default) and is then retried on the schedule. Each run queues
${ISOLATION_BACKLOG.toLocaleString('en')} deliveries for the healthy endpoint, alone (baseline) or
interleaved with as many for the hanging one, and times the healthy endpoint until it has all of
them. Baseline and hanging runs alternate, ${ISOLATION_ROUNDS} of each on fresh databases; the ratio is of their means.`,
  );
}
