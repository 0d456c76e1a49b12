import { execFileSync, execSync, fork, spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { accountScope, operatorScope } from '../src/domain/tenant-scope.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { createTestDatabase, type Dialect, type TestDatabase } from '../test/support/databases.ts';
import { freePort } from '../test/process/server-process.ts';
import type { AutocannonOrder } from './autocannon-process.ts';
import type { OpenLoopOrder, OpenLoopResult } from './open-loop-process.ts';

/** A percentile of already sorted numbers. */
export function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

/** The median of the numbers: for an even count, the lower of the middle two. */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
}

/** `min / **median** / max` of a benchmark's rounds, each formatted. */
export function minMedianMax(values: number[], format: (value: number) => string): string {
  return `${format(Math.min(...values))} / **${format(median(values))}** / ${format(Math.max(...values))}`;
}

export function machineDescription(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

/** The short commit hash, marked when the working tree differs from it. */
export function currentCommit(): string {
  try {
    const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    // The report itself is rewritten by each benchmark of a run; a change to it changes nothing measured.
    const changed = execSync("git status --porcelain --untracked-files=no -- . ':!docs/benchmarks.md'", { encoding: 'utf8' }).trim() !== '';
    return changed ? `${commit}, with uncommitted changes` : commit;
  } catch {
    return 'unknown';
  }
}

/**
 * Replaces the section between `<!-- NAME:start -->` and `<!-- NAME:end -->` in
 * docs/benchmarks.md, so each benchmark rewrites only its own results.
 */
export function writeReportSection(name: string, markdown: string): void {
  const file = path.resolve('docs/benchmarks.md');
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const section = `${start}\n${markdown.trim()}\n${end}`;
  const pattern = new RegExp(`${start}[\\s\\S]*?${end}`);
  fs.writeFileSync(file, pattern.test(current) ? current.replace(pattern, section) : `${current.trimEnd()}\n\n${section}\n`);
}

export { freePort };

/**
 * A CPU profile of this process from now until `stop`, written to BENCH_CPU_PROFILE_DIR as
 * `<name>-<time>.cpuprofile`; undefined when that knob is not set.
 */
export async function startCpuProfile(): Promise<{ stop(name: string): Promise<void> } | undefined> {
  const directory = process.env.BENCH_CPU_PROFILE_DIR;
  if (directory === undefined) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    stop: async (name) => {
      const { profile } = await session.post('Profiler.stop');
      fs.mkdirSync(directory, { recursive: true });
      fs.writeFileSync(path.join(directory, `${name}-${Date.now()}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    },
  };
}

export interface GatewayProcess {
  port: number;
  pid: number;
  /** Ends the server as an operator would (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * `wagw serve` in a process of its own, exactly as an operator starts it, so that the load tool
 * does not share its event loop. Its log goes to a file, as it would in production, rather than
 * through a pipe that the benchmark's own process would have to read.
 */
export async function startGatewayProcess(options: {
  databaseUrl: string;
  directory: string;
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** The node binary to run it on; the benchmark's own by default. */
  node?: string;
  /** The checkout whose bin/wagw runs; this one by default. */
  root?: string;
}): Promise<GatewayProcess> {
  const port = await freePort();
  const log = fs.openSync(path.join(options.directory, `gateway-${port}.log`), 'a');
  const root = path.resolve(options.root ?? '.');
  const child = spawn(options.node ?? process.execPath, [...(options.nodeArgs ?? []), path.join(root, 'bin/wagw'), 'serve'], {
    cwd: root,
    stdio: ['ignore', log, log],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: options.databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      WAGW_DATA_DIR: options.directory,
      WAGW_SECRET_KEY: BENCH_SECRET_KEY,
      ...options.env,
    },
  });
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!(await isHealthy(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`wagw serve did not come up; see ${path.join(options.directory, `gateway-${port}.log`)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    port,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`wagw serve exited with ${code} on SIGTERM`);
    },
  };
}

/** The key the benchmark's processes share, so that none writes a key file. */
export const BENCH_SECRET_KEY = 'be'.repeat(32);

function isHealthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/health', timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
}

/**
 * A helper script (such as bench/ceiling-server.ts) in its own process, listening on the port it
 * reports; on another node binary, or from another checkout (with its own node_modules), if asked.
 */
export async function startForkedServer(
  script: string,
  options: { node?: string; root?: string } = {},
): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const root = path.resolve(options.root ?? '.');
  const child = fork(path.join(root, script), [], { cwd: root, execArgv: ['--import', 'tsx'], execPath: options.node ?? process.execPath });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  return {
    port,
    pid: child.pid!,
    stop: async () => {
      child.disconnect();
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

export type LoadOptions = AutocannonOrder;

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * The CPU time (user and system) a process has used so far, from /proc. Unlike throughput, CPU
 * time per request hardly moves when other work shares the cores, which makes it the steadier
 * measure of what a change to the hot path saved. NaN where /proc is not available.
 */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces, so fields are counted from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  total2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** How long the run took, from its first request to its last answer. */
  elapsedSeconds: number;
}

/**
 * One autocannon run in a process of its own (bench/autocannon-process.ts). At a fixed rate,
 * autocannon corrects the latencies for coordinated omission, so a server that falls behind the
 * rate shows it in its percentiles. Autocannon records latencies in whole milliseconds.
 */
export async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  const child = fork(path.resolve('bench/autocannon-process.ts'), [], { execArgv: ['--import', 'tsx'] });
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    child.once('message', (message: { result: autocannon.Result }) => resolve(message.result));
    child.once('exit', (code) => reject(new Error(`the load process exited with ${code} before reporting`)));
    child.send(options);
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    elapsedSeconds: result.duration,
  };
}

/** One open-loop run in a process of its own (bench/open-loop-process.ts). */
export async function runOpenLoop(order: OpenLoopOrder): Promise<OpenLoopResult> {
  const child = fork(path.resolve('bench/open-loop-process.ts'), [], { execArgv: ['--import', 'tsx'] });
  return new Promise<OpenLoopResult>((resolve, reject) => {
    child.once('message', (message: { result: OpenLoopResult }) => resolve(message.result));
    child.once('exit', (code) => reject(new Error(`the open-loop process exited with ${code} before reporting`)));
    child.send(order);
  });
}

/** The sandbox number the send benchmarks send from, and the text they send. */
const SENDER = '+447700900001';
const TEXT = 'Your verification code is 482913. It expires in 10 minutes.';

/** A fresh database with an enterprise account, its sandbox number (the sender) and an API key. */
export async function seededSendDatabase(
  dialect: Dialect,
  databases: TestDatabase[],
  root?: string,
  /** A webhook for incoming messages, to this URL. */
  webhookUrl?: string,
): Promise<{ url: string; apiKey: string }> {
  const database = await createTestDatabase(dialect);
  databases.push(database);
  if (root !== undefined) return { url: database.url, apiKey: seedInCheckout(root, database.url) };
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: BENCH_SECRET_KEY,
    // The benchmark's endpoint listens on this machine.
    ...(webhookUrl !== undefined && { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' }),
  });
  const gateway = await createGateway(config, createLogger(config));
  try {
    const account = await gateway.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
    await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: SENDER });
    if (webhookUrl !== undefined)
      await gateway.webhooks.createWebhook(accountScope(account.id), { url: webhookUrl, eventTypes: ['message'] });
    const key = await gateway.apiKeys.createKey({ accountId: account.id, name: 'bench' });
    return { url: database.url, apiKey: key.plaintext };
  } finally {
    await gateway.close();
  }
}

/**
 * The same seed made by another checkout's own code, so that its migrations, not this tree's,
 * shape the database it is to serve. Returns the API key.
 */
function seedInCheckout(root: string, databaseUrl: string): string {
  const script = `
    import { loadConfig } from './src/config.ts';
    import { createGateway, createLogger } from './src/main.ts';
    import { operatorScope } from './src/domain/tenant-scope.ts';
    const config = loadConfig({ DATABASE_URL: process.env.SEED_DATABASE_URL, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: '${BENCH_SECRET_KEY}' });
    const gateway = await createGateway(config, createLogger(config));
    const account = await gateway.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
    await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: '${SENDER}' });
    const key = await gateway.apiKeys.createKey({ accountId: account.id, name: 'bench' });
    await gateway.close();
    console.log(JSON.stringify({ apiKey: key.plaintext }));
    process.exit(0);`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: path.resolve(root),
    env: { ...process.env, SEED_DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  return (JSON.parse(output.trim().split('\n').at(-1)!) as { apiKey: string }).apiKey;
}

/** The load tool's orders for sends from the seeded sender, a different recipient each. */
/** Simulated incoming messages to the benchmark's sandbox number, each from another phone. */
export function incomingOrder(target: { port: number }, apiKey: string) {
  return {
    url: `http://127.0.0.1:${target.port}/sandbox/receive`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    fromPhone: SENDER,
    incomingTo: SENDER,
    text: TEXT,
  };
}

export function sendOrder(target: { port: number }, apiKey: string) {
  return {
    url: `http://127.0.0.1:${target.port}/send_message`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    fromPhone: SENDER,
    text: TEXT,
  };
}

/**
 * Every answer must be a 200: a benchmark that counts refusals as throughput measures nothing.
 * Connection errors and timeouts (no answer within autocannon's 10 s) are reported instead.
 */
export function assertAllAnswered(result: LoadResult, what: string): LoadResult {
  if (result.non2xx > 0 || result.total2xx === 0) {
    throw new Error(`The send benchmark (${what}) got ${result.non2xx} non-2xx answers out of ${result.total2xx + result.non2xx}.`);
  }
  return result;
}

/**
 * The CPU seconds of the postmaster, of every process under it, and of those of them that have
 * ended (the postmaster's children's time, which a backend's joins when it exits), so that a
 * connection closed during the run does not take its CPU out of the sum.
 */
export function postgresCpuSeconds(postmasterPid: number | undefined): number {
  if (postmasterPid === undefined) return Number.NaN;
  let total = processCpuSeconds(postmasterPid) + endedChildrenCpuSeconds(postmasterPid);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmasterPid) total += processCpuSeconds(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

function endedChildrenCpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

export async function postmasterPidOf(url: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const directory = (await client.query<{ data_directory: string }>('show data_directory')).rows[0]!.data_directory;
    return Number(fs.readFileSync(path.join(directory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}
