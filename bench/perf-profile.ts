/**
 * A profile of where a process spends its CPU time, through Linux's `perf`, for the benchmarks.
 *
 * V8's profiler (`--cpu-prof`) samples at intervals of wall time: on this shared two-core
 * machine a gateway that is ready to run but waiting for a core is sampled all the same, and
 * the wait is counted to whatever it was doing, most often a system call (`fsync`, a socket's
 * `writev`). Its shares then follow the machine's load rather than the gateway's work: at load
 * 13, `fsync` took 8.7 % of an incoming message's profile, where the call costs the thread about
 * 30 µs of CPU once per batch. `perf`'s `cpu-clock` event counts only the time the process is on a
 * core, so its shares are shares of the gateway's CPU, whatever else runs. The gateway runs with
 * `--perf-basic-prof`, so that its compiled JavaScript has names in the samples.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The node flags a process needs for its JavaScript to be named in a perf profile. */
export const PERF_NODE_ARGS = ['--perf-basic-prof', '--interpreted-frames-native-stack'];

export interface PerfRecording {
  /** Ends the recording and answers the file it wrote. */
  stop(): Promise<string>;
}

/** Records the CPU time of the process `pid` (every thread of it) into `directory`, as `name`.perf.data. */
export async function startPerfRecording(pid: number, directory: string, name: string): Promise<PerfRecording> {
  fs.mkdirSync(directory, { recursive: true });
  const file = path.join(path.resolve(directory), `${name}.perf.data`);
  // BENCH_PERF_CALL_GRAPH=1 records each sample's stack too (`perf report --children` then says
  // which of our functions the time was spent under), at a few times the recording's size.
  const callGraph = process.env.BENCH_PERF_CALL_GRAPH === '1' ? ['-g'] : [];
  const recorder = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '999', ...callGraph, '-p', String(pid), '-o', file], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => recorder.once('exit', () => resolve()));
  // perf attaches within a few milliseconds; a short pause keeps the first requests in the profile.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return {
    async stop() {
      recorder.kill('SIGINT');
      await exited;
      return file;
    },
  };
}

export interface PerfEntry {
  symbol: string;
  /** Its share of the process's CPU time, in percent. */
  percent: number;
}

/** The symbols with the most self time in a recording, with their shares of the recorded CPU. */
export function topPerfSymbols(file: string, count: number): PerfEntry[] {
  const report = execFileSync('perf', ['report', '-i', file, '--stdio', '--no-children', '--sort', 'sym', '--percent-limit', '0.3'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const entries: PerfEntry[] = [];
  for (const line of report.split('\n')) {
    const match = /^\s+([\d.]+)%\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (match !== null) entries.push({ percent: Number(match[1]), symbol: match[2]!.trim() });
  }
  return entries.slice(0, count);
}

export function renderPerfTop(entries: readonly PerfEntry[]): string {
  const rows = entries.map(
    (entry, index) => `| ${index + 1} | \`${entry.symbol.replaceAll('|', '\\|')}\` | ${entry.percent.toFixed(1)} % |`,
  );
  return `| # | symbol | share of the gateway's CPU |\n|---|---|---|\n${rows.join('\n')}`;
}

/**
 * With a call graph (BENCH_PERF_CALL_GRAPH=1): the gateway's own functions (its dist/ or src/
 * files under `root`) with the share of the CPU spent in them or in what they called, each
 * counted once per sample however deep it recurs. Async functions count only while they run,
 * not while they wait, so a caller's share holds its callees' synchronous work.
 */
export function topOwnFunctions(file: string, root: string, count: number): PerfEntry[] {
  const script = execFileSync('perf', ['script', '-i', file, '-F', 'ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  // A JIT frame's name, as --perf-basic-prof writes it: "JS:*'name file:///…/dist/x.js:12:3", its
  // first mark the tier V8 compiled it in (left out, so that one function's tiers count as one).
  const own = new RegExp(`^JS:[*+^~]?'?(\\S*) file://${root.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(?:dist|src)/(\\S+):(\\d+):\\d+$`);
  const inclusive = new Map<string, number>();
  let samples = 0;
  for (const block of script.split('\n\n')) {
    if (block.trim() === '') continue;
    samples += 1;
    const seen = new Set<string>();
    for (const line of block.split('\n')) {
      const match = own.exec(line.trim().replace(/^[0-9a-f]+ /, ''));
      if (match === null) continue;
      const name = `${match[1] || '(anonymous)'} ${match[2]}:${match[3]}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
    }
  }
  return [...inclusive]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([symbol, hits]) => ({ symbol, percent: (hits * 100) / samples }));
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === import.meta.filename) {
  const file = process.argv[2];
  if (file === undefined) throw new Error('usage: node --import tsx bench/perf-profile.ts FILE.perf.data [COUNT] [ROOT]');
  const count = Number(process.argv[3] ?? 5);
  console.log(renderPerfTop(topPerfSymbols(file, count)));
  // ROOT names the checkout whose gateway was recorded, for a recording with a call graph.
  const root = process.argv[4];
  if (root !== undefined)
    console.log(`\nIts own functions, inclusive:\n${renderPerfTop(topOwnFunctions(file, path.resolve(root), count))}`);
}
