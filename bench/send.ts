import { operatorScope } from '../src/domain/tenant-scope.ts';
/**
 * npm run bench:send
 *
 * Send throughput and latency against a ceiling, and the cost of durability, on SQLite and on
 * PostgreSQL (WAGW_TEST_POSTGRES_URL, which `npm run bench:send` sets).
 *
 * Per dialect, in one run on one machine:
 * 1. the ceiling: a bare Fastify route answering the same JSON (bench/ceiling-server.ts),
 *    driven to saturation;
 * 2. `wagw serve` in its own process, on a sandbox number of an enterprise account (no quota
 *    limit), sending to phones outside the sandbox (so that a send does not also store an
 *    incoming copy), a different one each request, driven to saturation with the same load;
 * 3. right after, the same saturation run on a second gateway with WAGW_GROUP_COMMIT=false (one
 *    transaction per write) and a fresh database, for the cost of durability without batching;
 * 4. the group-committing gateway at 25 %, 50 % and 75 % of the ceiling's rate, for p50 and p99.
 * The load tool is autocannon, in a process of its own (bench/autocannon-process.ts). Any
 * non-2xx answer fails the benchmark; connection errors and timeouts are reported.
 *
 * BENCH_DIALECTS=sqlite,postgres picks the dialects; BENCH_CONNECTIONS the connections (64);
 * BENCH_CPU_PROFILE_DIR, when set, runs the group-commit gateway under --cpu-prof.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { createTestDatabase, type Dialect, type TestDatabase } from '../test/support/databases.ts';
import {
  BENCH_SECRET_KEY,
  currentCommit,
  machineDescription,
  processCpuSeconds,
  runAutocannon,
  startForkedServer,
  startGatewayProcess,
  writeReportSection,
  type LoadResult,
} from './support.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
// A freshly started gateway answers its first few thousand sends with code V8 has not optimised
// yet; with a 2 s warm-up its saturation run cost twice the CPU per send of the runs after it.
const SATURATION = { durationSeconds: 10, warmupSeconds: 6 };
const FIXED_RATE = { durationSeconds: 5, warmupSeconds: 1 };
const RATE_FRACTIONS = [0.25, 0.5, 0.75] as const;
const TARGET_RATIO = 0.7;
const TARGET_P99_MS = 10;
const SENDER = '+447700900001';
const TEXT = 'Your verification code is 482913. It expires in 10 minutes.';
const LOG_LEVEL = 'info';

interface DialectResult {
  dialect: Dialect;
  ceiling: Measured;
  send: Measured;
  fixedRates: { fraction: number; targetRate: number; ceiling?: Measured; send: Measured }[];
  oneTransactionPerWrite: Measured;
}

async function benchmark(dialect: Dialect): Promise<DialectResult> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `wagw-bench-send-${dialect}-`));
  const profile = process.env.BENCH_CPU_PROFILE_DIR;
  const databases: TestDatabase[] = [];
  const running: { stop(): Promise<void> }[] = [];
  const started = <T extends { stop(): Promise<void> }>(server: T): T => (running.push(server), server);
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
    const perWrite = await seededDatabase(dialect, databases);
    const perWriteGateway = started(await startGatewayProcess({ databaseUrl: perWrite.url, directory, env: { LOG_LEVEL, WAGW_GROUP_COMMIT: 'false' } }));
    const load = (target: Target, apiKey: string, settings: LoadSettings) => measure(target, apiKey, settings, dialect);

    // The three saturation runs back to back, so that the ratio and the durability comparison
    // are measured as close together as the machine allows.
    const ceilingResult = await load(ceiling, grouped.apiKey, SATURATION);
    log(dialect, 'ceiling', ceilingResult);
    const send = await load(gateway, grouped.apiKey, SATURATION);
    log(dialect, 'send', send);
    const oneTransactionPerWrite = await load(perWriteGateway, perWrite.apiKey, SATURATION);
    log(dialect, 'send, one transaction per write', oneTransactionPerWrite);

    const fixedRates: DialectResult['fixedRates'] = [];
    for (const fraction of RATE_FRACTIONS) {
      const targetRate = ceilingResult.requestsPerSecond * fraction;
      const sendAtRate = await load(gateway, grouped.apiKey, { ...FIXED_RATE, overallRate: targetRate });
      log(dialect, `send at ${fraction * 100} %`, sendAtRate);
      // The ceiling at the rate the target is checked at shows what the machine alone adds.
      const ceilingAtRate = fraction === 0.5 ? await load(ceiling, grouped.apiKey, { ...FIXED_RATE, overallRate: targetRate }) : undefined;
      if (ceilingAtRate !== undefined) log(dialect, `ceiling at ${fraction * 100} %`, ceilingAtRate);
      fixedRates.push({ fraction, targetRate, ceiling: ceilingAtRate, send: sendAtRate });
    }
    return { dialect, ceiling: ceilingResult, send, fixedRates, oneTransactionPerWrite };
  } finally {
    for (const server of running.reverse()) await server.stop();
    for (const database of databases) await database.drop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** A fresh database with an enterprise account, its sandbox number and an API key. */
async function seededDatabase(dialect: Dialect, databases: TestDatabase[]): Promise<{ url: string; apiKey: string }> {
  const database = await createTestDatabase(dialect);
  databases.push(database);
  const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: BENCH_SECRET_KEY });
  const gateway = await createGateway(config, createLogger(config));
  try {
    const account = await gateway.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
    await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: SENDER });
    const key = await gateway.apiKeys.createKey({ accountId: account.id, name: 'bench' });
    return { url: database.url, apiKey: key.plaintext };
  } finally {
    await gateway.close();
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
}

/** A warm-up run at the same settings, then the measured run with the server's CPU time around it. */
async function measure(target: Target, apiKey: string, settings: LoadSettings, dialect: Dialect): Promise<Measured> {
  const order = {
    url: `http://127.0.0.1:${target.port}/send_message`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    fromPhone: SENDER,
    text: TEXT,
    connections: CONNECTIONS,
    overallRate: settings.overallRate,
  };
  const what = `${dialect}, port ${target.port}`;
  if (settings.warmupSeconds > 0) assertAllAnswered(await runAutocannon({ ...order, durationSeconds: settings.warmupSeconds }), what);
  const cpuBefore = processCpuSeconds(target.pid);
  const result = assertAllAnswered(await runAutocannon({ ...order, durationSeconds: settings.durationSeconds }), what);
  const cpuSeconds = processCpuSeconds(target.pid) - cpuBefore;
  return { ...result, cpuMsPerRequest: (cpuSeconds * 1000) / result.total2xx };
}

/**
 * Every answer must be a 200: a benchmark that counts refusals as throughput measures nothing.
 * Connection errors and timeouts (no answer within autocannon's 10 s) are reported instead.
 */
function assertAllAnswered(result: LoadResult, what: string): LoadResult {
  if (result.non2xx > 0 || result.total2xx === 0) {
    throw new Error(`The send benchmark (${what}) got ${result.non2xx} non-2xx answers out of ${result.total2xx + result.non2xx}.`);
  }
  return result;
}

function log(dialect: Dialect, what: string, result: Measured): void {
  console.log(`${dialect} ${what}: ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.cpuMsPerRequest.toFixed(3)} ms CPU per request, ${result.errors} errors`);
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
The gateway (\`wagw serve\`, log level ${LOG_LEVEL}, its log written to a file), the ceiling server, autocannon (${CONNECTIONS} connections) and, for PostgreSQL, the database server each run in a process of their own, and all share the machine's two cores with whatever else runs on it, so absolute rates move a lot between runs; the ratio, measured seconds apart in one run, is the number to compare.`;
  const cpu = (result: Measured) => `${(result.cpuMsPerRequest * 1000).toFixed(0)} µs`;
  const errors = (result: Measured) => (result.errors === 0 ? '0' : `${result.errors} (${result.timeouts} timeouts)`);
  const saturationRows = all.map((result) => {
    const ratio = result.send.requestsPerSecond / result.ceiling.requestsPerSecond;
    const atHalf = result.fixedRates.find((entry) => entry.fraction === 0.5)!;
    const p99Holds = atHalf.send.p99Ms <= TARGET_P99_MS && atHalf.send.requestsPerSecond >= atHalf.targetRate * 0.95;
    return `| ${result.dialect} | ${rate(result.ceiling.requestsPerSecond)} /s | ${rate(result.send.requestsPerSecond)} /s | ${result.send.p50Ms} / ${result.send.p99Ms} ms | ${errors(result.send)} | **${ratio.toFixed(2)}** ${ratio >= TARGET_RATIO ? 'met' : 'not met'} | ${cpu(result.ceiling)} / ${cpu(result.send)} | ${atHalf.send.p99Ms} ms ${p99Holds ? 'met' : 'not met'} |`;
  });
  const rateRows = all.flatMap((result) =>
    result.fixedRates.map(
      (entry) =>
        `| ${result.dialect} | ${entry.fraction * 100} % | ${rate(entry.targetRate)} /s | ${rate(entry.send.requestsPerSecond)} /s | ${entry.send.p50Ms} ms | ${entry.send.p99Ms} ms | ${errors(entry.send)} | ${entry.ceiling === undefined ? '' : `${entry.ceiling.p50Ms} / ${entry.ceiling.p99Ms} ms`} |`,
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
answers the same JSON, with nothing else. Saturation: ${SATURATION.durationSeconds} s after a ${SATURATION.warmupSeconds} s warm-up. CPU per
request is the server process's user and system time over the run divided by its answers; it
moves much less than throughput when other work takes the cores, so it is the better guide to
what a change saved. Errors are connections that failed or got no answer within 10 s.

| database | ceiling | send | send p50 / p99 | errors | send ÷ ceiling (target ≥ ${TARGET_RATIO.toFixed(2)}) | CPU per request, ceiling / send | p99 at 50 % of the ceiling (target ≤ ${TARGET_P99_MS} ms) |
|---|---|---|---|---|---|---|---|
${saturationRows.join('\n')}

At fixed rates (fractions of that run's ceiling; ${FIXED_RATE.durationSeconds} s after ${FIXED_RATE.warmupSeconds} s of warm-up; latencies corrected for
coordinated omission, so a rate the gateway cannot keep shows in its percentiles; autocannon
records whole milliseconds):

| database | fraction | asked | achieved | p50 | p99 | errors | ceiling p50 / p99 at that rate |
|---|---|---|---|---|---|---|---|
${rateRows.join('\n')}`,
  );
  const durabilityRows = all.map(
    (result) =>
      `| ${result.dialect} | ${rate(result.send.requestsPerSecond)} /s | ${result.send.p99Ms} ms | ${cpu(result.send)} | ${rate(result.oneTransactionPerWrite.requestsPerSecond)} /s | ${result.oneTransactionPerWrite.p99Ms} ms | ${cpu(result.oneTransactionPerWrite)} | ${errors(result.oneTransactionPerWrite)} | ${(result.send.requestsPerSecond / result.oneTransactionPerWrite.requestsPerSecond).toFixed(2)} × |`,
  );
  writeReportSection(
    'bench:durability',
    `## Durability: group commit against one transaction per write (\`npm run bench:send\`)

${measured}

The same saturation run as above, right after it, on a second gateway with
\`WAGW_GROUP_COMMIT=false\` and a fresh database: every write (a send makes two, and the
sandbox's delivery receipt a third) commits in a transaction of its own, with its own fsync.
Both are equally durable: a 200 means committed to disk either way.

| database | group commit | p99 | CPU per send | one transaction per write | p99 | CPU per send | errors | group commit gains |
|---|---|---|---|---|---|---|---|---|
${durabilityRows.join('\n')}`,
  );
}
