import { execSync, fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import { freePort } from '../test/process/server-process.ts';
import type { AutocannonOrder } from './autocannon-process.ts';
import type { OpenLoopOrder, OpenLoopResult } from './open-loop-process.ts';

/** A percentile of already sorted numbers. */
export function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
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
}): Promise<GatewayProcess> {
  const port = await freePort();
  const log = fs.openSync(path.join(options.directory, `gateway-${port}.log`), 'a');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), path.resolve('bin/wagw'), 'serve'], {
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

/** A helper script (such as bench/ceiling-server.ts) in its own process, listening on the port it reports. */
export async function startForkedServer(script: string): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const child = fork(path.resolve(script), [], { execArgv: ['--import', 'tsx'] });
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
