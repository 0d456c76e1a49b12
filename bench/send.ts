/**
 * npm run bench:send
 *
 * Send throughput and latency against a ceiling, and the cost of durability, on SQLite and on
 * PostgreSQL (WAGW_TEST_POSTGRES_URL, which `npm run bench:send` sets).
 *
 * Per dialect, in one run on one machine, BENCH_ROUNDS (3) rounds of:
 * 1. the ceiling: a bare Fastify route answering the same JSON (bench/ceiling-server.ts),
 *    driven to saturation;
 * 2. `wagw serve` in its own process, on a sandbox number of an enterprise account (no quota
 *    limit), sending to phones outside the sandbox (so that a send does not also store an
 *    incoming copy), a different one each request, driven to saturation with the same load;
 * 3. both at a fixed 1,000 requests a second from the open-loop generator, for p50 and p99.
 * Then, once, the same saturation run on a second gateway with WAGW_GROUP_COMMIT=false (one
 * transaction per write) and a fresh database, for the cost of durability without batching.
 * The saturation load is autocannon, in a process of its own (bench/autocannon-process.ts). Any
 * non-2xx answer fails the benchmark; connection errors and timeouts are reported.
 *
 * BENCH_DIALECTS=sqlite,postgres picks the dialects; BENCH_CONNECTIONS the connections (64);
 * BENCH_CPU_PROFILE_DIR, when set, runs the group-commit gateway under --cpu-prof.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Dialect, TestDatabase } from '../test/support/databases.ts';
import {
  assertAllAnswered,
  currentCommit,
  machineDescription,
  median,
  minMedianMax,
  processCpuSeconds,
  runAutocannon,
  startForkedServer,
  startGatewayProcess,
  runOpenLoop,
  seededSendDatabase as seededDatabase,
  sendOrder,
  writeReportSection,
  type LoadResult,
} from './support.ts';
import type { OpenLoopResult } from './open-loop-process.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
// A freshly started gateway answers its first few thousand sends with code V8 has not optimised
// yet; with a 2 s warm-up its saturation run cost twice the CPU per send of the runs after it.
const SATURATION = { durationSeconds: 10, warmupSeconds: 6 };
const OPEN_LOOP = { ratePerSecond: 1_000, durationSeconds: 10, warmupSeconds: 2 };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Issue 13's targets: send ÷ bare echo at saturation, and the send's p99 at 1,000 a second. */
const TARGET_RATIO: Record<Dialect, number> = { sqlite: 0.5, postgres: 0.3 };
const TARGET_P99_MS: Record<Dialect, number> = { sqlite: 10, postgres: 20 };
const LOG_LEVEL = 'info';

interface Round {
  ceiling: Measured;
  send: Measured;
  /** Open loop at OPEN_LOOP.ratePerSecond: the bare echo, then the gateway. */
  ceilingAtRate: OpenLoopResult;
  sendAtRate: OpenLoopResult;
}

interface DialectResult {
  dialect: Dialect;
  rounds: Round[];
  oneTransactionPerWrite: Measured;
  /** The group-commit gateway's saturation run just before it, for the comparison. */
  groupCommit: Measured;
}

async function benchmark(dialect: Dialect): Promise<DialectResult> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `wagw-bench-send-${dialect}-`));
  const profile = process.env.BENCH_CPU_PROFILE_DIR;
  const databases: TestDatabase[] = [];
  const running: { stop(): Promise<void> }[] = [];
  const started = <T extends { stop(): Promise<void> }>(server: T): T => {
    running.push(server);
    return server;
  };
  try {
    const ceiling = started(await startForkedServer('bench/ceiling-server.ts'));
    const grouped = await seededDatabase(dialect, databases);
    const gateway = started(
      await startGatewayProcess({
        databaseUrl: grouped.url,
        directory,
        env: { LOG_LEVEL },
        nodeArgs: profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profile)}`],
      }),
    );
    const load = (target: Target, apiKey: string, settings: LoadSettings) => measure(target, apiKey, settings, dialect);
    const openLoop = (target: Target) => runOpenLoop({ ...sendOrder(target, grouped.apiKey), ...OPEN_LOOP });

    // Each round measures the ceiling and the gateway seconds apart, so each ratio is one
    // moment's; the rounds show how far the moments differ.
    const rounds: Round[] = [];
    for (let index = 0; index < ROUNDS; index++) {
      const ceilingResult = await load(ceiling, grouped.apiKey, SATURATION);
      log(dialect, `round ${index + 1}: ceiling`, ceilingResult);
      const send = await load(gateway, grouped.apiKey, SATURATION);
      log(dialect, `round ${index + 1}: send`, send);
      const ceilingAtRate = await openLoop(ceiling);
      logOpenLoop(dialect, `round ${index + 1}: ceiling at ${OPEN_LOOP.ratePerSecond}/s`, ceilingAtRate);
      const sendAtRate = await openLoop(gateway);
      logOpenLoop(dialect, `round ${index + 1}: send at ${OPEN_LOOP.ratePerSecond}/s`, sendAtRate);
      rounds.push({ ceiling: ceilingResult, send, ceilingAtRate, sendAtRate });
    }

    // Durability without batching, right after a group-commit run, on a fresh database.
    const perWrite = await seededDatabase(dialect, databases);
    const perWriteGateway = started(
      await startGatewayProcess({ databaseUrl: perWrite.url, directory, env: { LOG_LEVEL, WAGW_GROUP_COMMIT: 'false' } }),
    );
    const groupCommit = await load(gateway, grouped.apiKey, SATURATION);
    const oneTransactionPerWrite = await load(perWriteGateway, perWrite.apiKey, SATURATION);
    log(dialect, 'send, one transaction per write', oneTransactionPerWrite);
    return { dialect, rounds, groupCommit, oneTransactionPerWrite };
  } finally {
    for (const server of running.reverse()) await server.stop();
    for (const database of databases) await database.drop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

interface Target {
  port: number;
  pid: number;
}

interface LoadSettings {
  durationSeconds: number;
  warmupSeconds: number;
  overallRate?: number;
}

export interface Measured extends LoadResult {
  /** The server process's CPU time (user and system) per answered request. */
  cpuMsPerRequest: number;
  /** The machine's 1-minute load average at the end of the run. */
  loadAverage: number;
}

/** A warm-up run at the same settings, then the measured run with the server's CPU time around it. */
async function measure(target: Target, apiKey: string, settings: LoadSettings, dialect: Dialect): Promise<Measured> {
  const order = { ...sendOrder(target, apiKey), connections: CONNECTIONS, overallRate: settings.overallRate };
  const what = `${dialect}, port ${target.port}`;
  if (settings.warmupSeconds > 0) assertAllAnswered(await runAutocannon({ ...order, durationSeconds: settings.warmupSeconds }), what);
  const cpuBefore = processCpuSeconds(target.pid);
  const result = assertAllAnswered(await runAutocannon({ ...order, durationSeconds: settings.durationSeconds }), what);
  const cpuSeconds = processCpuSeconds(target.pid) - cpuBefore;
  return { ...result, cpuMsPerRequest: (cpuSeconds * 1000) / result.total2xx, loadAverage: os.loadavg()[0]! };
}

function logOpenLoop(dialect: Dialect, what: string, result: OpenLoopResult): void {
  console.log(
    `${dialect} ${what}: ${Math.round(result.answeredPerSecond)} answered/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, max ${result.maxMs.toFixed(1)} ms, ${result.non2xx} non-2xx, ${result.errors} errors, load ${result.loadAverage.toFixed(2)}`,
  );
  if (result.non2xx > 0 || result.answered2xx === 0)
    throw new Error(`The open-loop run (${dialect} ${what}) got ${result.non2xx} non-2xx answers.`);
}

function log(dialect: Dialect, what: string, result: Measured): void {
  console.log(
    `${dialect} ${what}: ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.cpuMsPerRequest.toFixed(3)} ms CPU per request, ${result.errors} errors`,
  );
}

const results: DialectResult[] = [];
for (const dialect of (process.env.BENCH_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as Dialect[]) {
  results.push(await benchmark(dialect));
}
writeReports(results);
process.exit(0);

function writeReports(all: DialectResult[]): void {
  const rate = (value: number) => Math.round(value).toLocaleString('en');
  const measured = `Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.
The gateway (\`wagw serve\`, log level ${LOG_LEVEL}, its log written to a file), the ceiling server, the load tools and, for PostgreSQL, the database server each run in a process of their own, and all share the machine's two cores with whatever else runs on it, so absolute rates move a lot between runs; the ratios, measured seconds apart in one round, are the numbers to compare. Load is the 1-minute load average at the end of each run.`;
  const cpu = (result: Measured) => `${(result.cpuMsPerRequest * 1000).toFixed(0)} µs`;
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const spread = minMedianMax;
  const verdict = (met: boolean) => (met ? 'met' : 'not met');
  const summaryRows = all.map((result) => {
    const ratios = result.rounds.map((round) => round.send.requestsPerSecond / round.ceiling.requestsPerSecond);
    const p99s = result.rounds.map((round) => round.sendAtRate.p99Ms);
    return `| ${result.dialect} | ${spread(ratios, (value) => value.toFixed(2))} | ${TARGET_RATIO[result.dialect].toFixed(2)}, ${verdict(median(ratios) >= TARGET_RATIO[result.dialect])} | ${spread(p99s, ms)} | ${spread(
      result.rounds.map((round) => round.ceilingAtRate.p99Ms),
      ms,
    )} | ${TARGET_P99_MS[result.dialect]} ms, ${verdict(median(p99s) <= TARGET_P99_MS[result.dialect])} |`;
  });
  const roundRows = all.flatMap((result) =>
    result.rounds.map(
      (round, index) =>
        `| ${result.dialect} | ${index + 1} | ${rate(round.ceiling.requestsPerSecond)} /s (${round.ceiling.loadAverage.toFixed(1)}) | ${rate(round.send.requestsPerSecond)} /s (${round.send.loadAverage.toFixed(1)}) | ${(round.send.requestsPerSecond / round.ceiling.requestsPerSecond).toFixed(2)} | ${cpu(round.ceiling)} / ${cpu(round.send)} | ${ms(round.ceilingAtRate.p50Ms)} / ${ms(round.ceilingAtRate.p99Ms)} / ${ms(round.ceilingAtRate.maxMs)} (${round.ceilingAtRate.loadAverage.toFixed(1)}) | ${ms(round.sendAtRate.p50Ms)} / ${ms(round.sendAtRate.p99Ms)} / ${ms(round.sendAtRate.maxMs)} (${round.sendAtRate.loadAverage.toFixed(1)}) | ${rate(round.sendAtRate.answeredPerSecond)} /s, ${round.sendAtRate.errors} errors, ${round.sendAtRate.unanswered} unanswered after 10 s |`,
    ),
  );
  writeReportSection(
    'bench:send',
    `## Send (\`npm run bench:send\`)

${measured}

Each request is \`POST /send_message\` with a valid body, from a sandbox number of an enterprise
account to phones outside the sandbox (90,000 of them in turn, so that nothing keyed by the
recipient stays warm). Its 200 comes after the message row and its quota unit
are durably committed (SQLite WAL with \`synchronous=FULL\`; PostgreSQL with
\`synchronous_commit=on\` and \`fsync=on\`), the sandbox engine has accepted it, and its \`sent\`
status is committed too. The ceiling is a bare Fastify route that parses the same body and
answers the same JSON, with nothing else.

Each of ${ROUNDS} rounds runs, back to back: the ceiling and then the gateway at saturation
(autocannon, ${CONNECTIONS} connections, ${SATURATION.durationSeconds} s after a ${SATURATION.warmupSeconds} s warm-up), then both at a fixed
${rate(OPEN_LOOP.ratePerSecond)} requests a second with the open-loop generator (bench/open-loop-process.ts: ${OPEN_LOOP.durationSeconds} s after
${OPEN_LOOP.warmupSeconds} s of warm-up). The generator sends on a fixed schedule whatever the answers, and times each
request from the moment it was due, so a stall shows in every request due during it. CPU per
request is the server process's user and system time over the run divided by its answers.

Min / **median** / max over the rounds:

| database | send ÷ ceiling at saturation | target | send p99 at ${rate(OPEN_LOOP.ratePerSecond)}/s | bare echo p99 at ${rate(OPEN_LOOP.ratePerSecond)}/s | target |
|---|---|---|---|---|---|
${summaryRows.join('\n')}

Every round (load average in brackets):

| database | round | ceiling | send | ratio | CPU per request, ceiling / send | echo at ${rate(OPEN_LOOP.ratePerSecond)}/s p50 / p99 / max | send at ${rate(OPEN_LOOP.ratePerSecond)}/s p50 / p99 / max | send answered (the generator stops waiting 10 s after its schedule; requests still open then are counted, not dropped by the gateway) |
|---|---|---|---|---|---|---|---|---|
${roundRows.join('\n')}`,
  );
  const errors = (result: Measured) => (result.errors === 0 ? '0' : `${result.errors} (${result.timeouts} timeouts)`);
  const durabilityRows = all.map(
    (result) =>
      `| ${result.dialect} | ${rate(result.groupCommit.requestsPerSecond)} /s | ${result.groupCommit.p99Ms} ms | ${cpu(result.groupCommit)} | ${rate(result.oneTransactionPerWrite.requestsPerSecond)} /s | ${result.oneTransactionPerWrite.p99Ms} ms | ${cpu(result.oneTransactionPerWrite)} | ${errors(result.oneTransactionPerWrite)} | ${(result.groupCommit.requestsPerSecond / result.oneTransactionPerWrite.requestsPerSecond).toFixed(2)} × |`,
  );
  writeReportSection(
    'bench:durability',
    `## Durability: group commit against one transaction per write (\`npm run bench:send\`)

${measured}

A saturation run of the group-committing gateway after the rounds above, then the same run on a
second gateway with \`WAGW_GROUP_COMMIT=false\` and a fresh database: every write (a send makes
two, and the sandbox's delivery receipt a third) commits in a transaction of its own, with its
own fsync. Both are equally durable: a 200 means committed to disk either way.

| database | group commit | p99 | CPU per send | one transaction per write | p99 | CPU per send | errors | group commit gains |
|---|---|---|---|---|---|---|---|---|
${durabilityRows.join('\n')}`,
  );
}
