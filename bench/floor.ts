/**
 * npm run bench:floor
 *
 * Where the send stands between the bare echo and the durable floor, in one run per database:
 * 1. the echo: a bare Fastify route answering the send's JSON (bench/ceiling-server.ts);
 * 2. the floor: the same route writing each send durably and nothing more, one prepared insert,
 *    its `sent` update and its receipt, batched with one fsync per batch (bench/floor-server.ts);
 * 3. `wagw serve` on a sandbox number of an enterprise account;
 * 4. the same gateway taking simulated incoming messages (POST /sandbox/receive), each delivered
 *    to a webhook endpoint in this process: CPU per incoming message from its request until every
 *    one of them has reached the endpoint.
 * Each is driven to saturation by autocannon (BENCH_CONNECTIONS, 32) for BENCH_FLOOR_SECONDS (5)
 * after a warm-up of BENCH_FLOOR_WARMUP_SECONDS (3), and its process's CPU time per answer is
 * read from /proc: the steady measure on a shared machine, where throughput moves with the
 * load. On PostgreSQL the database server's CPU per answer is read too (every process under its
 * postmaster). BENCH_DIALECTS=sqlite,postgres picks the databases. BENCH_FLOOR_COMPARE_ROOT, a
 * checkout of another commit (with its node_modules), adds that commit's send to the same run,
 * on a database that checkout migrates and seeds itself.
 * BENCH_CPU_PROFILE_DIR runs this tree's gateway under --cpu-prof; with it, BENCH_FLOOR_PHASES
 * (echo,floor,send,incoming) narrows the run, so that a profile holds one path.
 * BENCH_PERF_DIR records the measured seconds of each phase of this tree's gateway with Linux's
 * `perf` instead (bench/perf-profile.ts: CPU time, which the machine's load does not distort as it
 * does V8's wall-clock samples) and prints the five symbols with the most of it.
 * WAGW_SQLITE_COMMIT_SYNC is handed to this tree's gateway, to measure both ways (ADR 0037).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type Dialect, type TestDatabase } from '../test/support/databases.ts';
import {
  assertAllAnswered,
  currentCommit,
  incomingOrder,
  machineDescription,
  postgresCpuSeconds,
  postmasterPidOf,
  processCpuSeconds,
  runAutocannon,
  seededSendDatabase,
  sendOrder,
  startForkedServer,
  startGatewayProcess,
  writeReportSection,
} from './support.ts';
import { PERF_NODE_ARGS, renderPerfTop, startPerfRecording, topPerfSymbols } from './perf-profile.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_FLOOR_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_FLOOR_WARMUP_SECONDS ?? 3);
const COMPARE_ROOT = process.env.BENCH_FLOOR_COMPARE_ROOT;
const PHASES = new Set((process.env.BENCH_FLOOR_PHASES ?? 'echo,floor,send,incoming').split(','));
const PERF_DIR = process.env.BENCH_PERF_DIR;
const NOT_MEASURED: Figure = {
  requestsPerSecond: Number.NaN,
  cpuMicroseconds: Number.NaN,
  databaseCpuMicroseconds: Number.NaN,
  loadAverage: Number.NaN,
};

interface Figure {
  requestsPerSecond: number;
  /** The server process's CPU per answer. */
  cpuMicroseconds: number;
  /** PostgreSQL's CPU per answer, all its processes; NaN on SQLite. */
  databaseCpuMicroseconds: number;
  loadAverage: number;
}

interface DialectFigures {
  dialect: Dialect;
  echo: Figure;
  floor: Figure;
  send: Figure;
  /** Incoming message → its webhook delivered: CPU per delivered message, throughput of the requests. */
  incoming: Figure;
  /** The send of the checkout at BENCH_FLOOR_COMPARE_ROOT, measured right after this one's. */
  compared?: Figure;
}

async function measure(
  target: { port: number; pid: number; profiled?: boolean },
  apiKey: string,
  postmasterPid: number | undefined,
  what: string,
): Promise<Figure> {
  const order = { ...sendOrder(target, apiKey), connections: CONNECTIONS };
  assertAllAnswered(await runAutocannon({ ...order, durationSeconds: WARMUP_SECONDS }), what);
  const recording = await recordIfAsked(target, what);
  const cpuBefore = processCpuSeconds(target.pid);
  const databaseBefore = postgresCpuSeconds(postmasterPid);
  const result = assertAllAnswered(await runAutocannon({ ...order, durationSeconds: SECONDS }), what);
  await printPerfTop(recording);
  const answers = result.total2xx;
  const figure = {
    requestsPerSecond: result.requestsPerSecond,
    cpuMicroseconds: ((processCpuSeconds(target.pid) - cpuBefore) * 1e6) / answers,
    databaseCpuMicroseconds: ((postgresCpuSeconds(postmasterPid) - databaseBefore) * 1e6) / answers,
    loadAverage: os.loadavg()[0]!,
  };
  console.log(
    `${what}: ${Math.round(figure.requestsPerSecond)}/s, ${figure.cpuMicroseconds.toFixed(0)} µs CPU per answer${Number.isNaN(figure.databaseCpuMicroseconds) ? '' : ` + ${figure.databaseCpuMicroseconds.toFixed(0)} µs in PostgreSQL`}, load ${figure.loadAverage.toFixed(2)}`,
  );
  return figure;
}

/** With BENCH_PERF_DIR, a perf recording of this tree's gateway (the echo and the floor are not profiled). */
function recordIfAsked(target: { pid: number; profiled?: boolean }, what: string) {
  if (PERF_DIR === undefined || target.profiled !== true) return Promise.resolve(undefined);
  return startPerfRecording(target.pid, PERF_DIR, what.replaceAll(/[^a-z0-9]+/gi, '-'));
}

async function printPerfTop(recording: Awaited<ReturnType<typeof recordIfAsked>>): Promise<void> {
  if (recording === undefined) return;
  const file = await recording.stop();
  console.log(`${file}, the gateway's CPU time, top five:\n${renderPerfTop(topPerfSymbols(file, 5))}`);
}

/** A webhook endpoint that answers 204 at once and counts what reached it. */
async function startCountingEndpoint(): Promise<{ url: string; received(): number; close(): Promise<void> }> {
  let received = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Incoming messages at saturation for SECONDS after the warm-up; the CPU is counted from the
 * first measured request until the endpoint has every message answered 200 so far, so that it
 * holds each message's storage, its delivery and the delivery's outcome.
 */
async function measureIncoming(
  gateway: { port: number; pid: number; profiled?: boolean },
  apiKey: string,
  postmasterPid: number | undefined,
  endpoint: { received(): number },
  what: string,
): Promise<Figure> {
  const order = { ...incomingOrder(gateway, apiKey), connections: CONNECTIONS };
  const warm = assertAllAnswered(await runAutocannon({ ...order, durationSeconds: WARMUP_SECONDS }), what);
  await untilDelivered(endpoint, warm.total2xx, what);
  const recording = await recordIfAsked(gateway, what);
  const cpuBefore = processCpuSeconds(gateway.pid);
  const databaseBefore = postgresCpuSeconds(postmasterPid);
  const deliveredBefore = endpoint.received();
  const result = assertAllAnswered(await runAutocannon({ ...order, durationSeconds: SECONDS }), what);
  await untilDelivered(endpoint, deliveredBefore + result.total2xx, what);
  await printPerfTop(recording);
  const delivered = endpoint.received() - deliveredBefore;
  const figure = {
    requestsPerSecond: result.requestsPerSecond,
    cpuMicroseconds: ((processCpuSeconds(gateway.pid) - cpuBefore) * 1e6) / delivered,
    databaseCpuMicroseconds: ((postgresCpuSeconds(postmasterPid) - databaseBefore) * 1e6) / delivered,
    loadAverage: os.loadavg()[0]!,
  };
  console.log(
    `${what}: ${Math.round(figure.requestsPerSecond)}/s, ${figure.cpuMicroseconds.toFixed(0)} µs CPU per delivered message${Number.isNaN(figure.databaseCpuMicroseconds) ? '' : ` + ${figure.databaseCpuMicroseconds.toFixed(0)} µs in PostgreSQL`}, load ${figure.loadAverage.toFixed(2)}`,
  );
  return figure;
}

async function untilDelivered(endpoint: { received(): number }, count: number, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (endpoint.received() < count) {
    if (Date.now() > deadline) throw new Error(`${what}: ${endpoint.received()} of ${count} deliveries arrived within 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function benchmark(dialect: Dialect): Promise<DialectFigures> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `wagw-bench-floor-${dialect}-`));
  const databases: TestDatabase[] = [];
  const running: { stop(): Promise<void> }[] = [];
  const endpoint = await startCountingEndpoint();
  try {
    const gatewayDatabase = await seededSendDatabase(dialect, databases, undefined, endpoint.url);
    const floorDatabase = dialect === 'sqlite' ? undefined : await createTestDatabase('postgres');
    if (floorDatabase !== undefined) databases.push(floorDatabase);
    process.env.FLOOR_DATABASE = floorDatabase?.url ?? `sqlite:${path.join(directory, 'floor.sqlite')}`;
    const echo = await startForkedServer('bench/ceiling-server.ts');
    running.push(echo);
    const floor = await startForkedServer('bench/floor-server.ts');
    running.push(floor);
    const profile = process.env.BENCH_CPU_PROFILE_DIR;
    const nodeArgs = [
      ...(profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profile)}`]),
      ...(PERF_DIR === undefined ? [] : PERF_NODE_ARGS),
    ];
    const gateway = await startGatewayProcess({
      databaseUrl: gatewayDatabase.url,
      directory,
      // The endpoint is on this machine; simulated incoming messages far faster than a tenant's limit.
      env: {
        LOG_LEVEL: 'info',
        WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
        WAGW_SANDBOX_RECEIVES_PER_MINUTE: '100000000',
        // Where SQLite's commits sync their log, to measure both ways (ADR 0037).
        ...(process.env.WAGW_SQLITE_COMMIT_SYNC !== undefined && { WAGW_SQLITE_COMMIT_SYNC: process.env.WAGW_SQLITE_COMMIT_SYNC }),
      },
      nodeArgs,
    });
    running.push(gateway);
    const profiledGateway = { ...gateway, profiled: true };
    const postmaster = dialect === 'postgres' ? await postmasterPidOf(gatewayDatabase.url) : undefined;
    // Back to back, so that they share one moment's load.
    const figures: DialectFigures = {
      dialect,
      echo: PHASES.has('echo') ? await measure(echo, gatewayDatabase.apiKey, postmaster, `${dialect} echo`) : NOT_MEASURED,
      floor: PHASES.has('floor') ? await measure(floor, gatewayDatabase.apiKey, postmaster, `${dialect} floor`) : NOT_MEASURED,
      send: PHASES.has('send') ? await measure(profiledGateway, gatewayDatabase.apiKey, postmaster, `${dialect} send`) : NOT_MEASURED,
      incoming: PHASES.has('incoming')
        ? await measureIncoming(profiledGateway, gatewayDatabase.apiKey, postmaster, endpoint, `${dialect} incoming → delivered`)
        : NOT_MEASURED,
    };
    if (COMPARE_ROOT !== undefined) {
      const comparedDatabase = await seededSendDatabase(dialect, databases, COMPARE_ROOT);
      const compared = await startGatewayProcess({
        databaseUrl: comparedDatabase.url,
        directory,
        env: { LOG_LEVEL: 'info' },
        root: COMPARE_ROOT,
      });
      running.push(compared);
      figures.compared = await measure(compared, comparedDatabase.apiKey, postmaster, `${dialect} send at ${COMPARE_ROOT}`);
    }
    return figures;
  } finally {
    for (const server of running.reverse()) await server.stop();
    for (const database of databases) await database.drop();
    await endpoint.close();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

const results: DialectFigures[] = [];
for (const dialect of (process.env.BENCH_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as Dialect[])
  results.push(await benchmark(dialect));

const micro = (value: number) => (Number.isNaN(value) ? '–' : `${value.toFixed(0)} µs`);
const rows = results.flatMap(({ dialect, echo, floor, send, incoming, compared }) =>
  [
    ['echo', echo],
    ['floor', floor],
    ['send', send],
    ['incoming → delivered', incoming],
    ...(compared === undefined ? [] : [['send, compared checkout', compared]]),
  ].map(
    ([name, figure]) =>
      `| ${dialect} | ${name as string} | ${Math.round((figure as Figure).requestsPerSecond).toLocaleString('en')} /s | ${((figure as Figure).requestsPerSecond / echo.requestsPerSecond).toFixed(2)} | ${micro((figure as Figure).cpuMicroseconds)} | ${micro((figure as Figure).databaseCpuMicroseconds)} | ${(figure as Figure).loadAverage.toFixed(1)} |`,
  ),
);
// A run of some phases, or one under the profiler, is for looking at, not for the record: its
// table would have holes (NaN rows) and a profiled gateway's CPU is not a gateway's.
const fullRun =
  ['echo', 'floor', 'send', 'incoming'].every((phase) => PHASES.has(phase)) &&
  process.env.BENCH_CPU_PROFILE_DIR === undefined &&
  PERF_DIR === undefined;
if (!fullRun) {
  console.log('A partial or profiled run: docs/benchmarks.md is left as it is.');
  process.exit(0);
}
writeReportSection(
  'bench:floor',
  `## Echo, floor and send in one run (\`npm run bench:floor\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}, autocannon with ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up each, back to back.
The floor (bench/floor-server.ts) is the echo plus the least durable send: one prepared insert, its \`sent\` update and its receipt, batched with one fsync per batch.
CPU is per answer, from /proc: the server process's, and on PostgreSQL every database process's. For incoming → delivered it is per message, from the first measured \`POST /sandbox/receive\` until every one answered has reached a local webhook endpoint (204 at once), so it holds the message's storage, its signed delivery and the delivery's outcome; its throughput is that of the requests.

| database | server | throughput | ÷ echo | CPU per answer | PostgreSQL CPU per answer | load |
|---|---|---|---|---|---|---|
${rows.join('\n')}`,
);
process.exit(0);
