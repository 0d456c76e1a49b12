// Start time and idle memory: how long `wagw account list` takes, how long `wagw serve` takes
// to answer /health, and the server's resident memory once idle, for each way of running the
// gateway: the compiled build (dist/, what `npm start` runs), the TypeScript sources through
// tsx, and optionally another checkout (`--before <dir>`, e.g. the commit before the compiled
// build). Writes its section of docs/benchmarks.md.
//   node --import tsx bench/startup.ts [--before /path/to/checkout] [--rounds 5]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compiledIsCurrent } from '../bin/build-freshness.mjs';
import { BENCH_SECRET_KEY, currentCommit, machineDescription, minMedianMax, startGatewayProcess, writeReportSection } from './support.ts';

/** How long the server sits idle before its memory is read: past the start's sweeps and first lease ticks. */
const IDLE_MS = 10_000;

interface Variant {
  label: string;
  root: string;
  env: Record<string, string>;
}

interface Figures {
  cliMs: number[];
  cliCpuMs: number[];
  serveMs: number[];
  serveCpuMs: number[];
  idleRssMiB: number[];
}

const { values } = parseArgs({ options: { before: { type: 'string' }, rounds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const here = path.resolve('.');
const variants: Variant[] = [
  ...(values.before === undefined
    ? []
    : [
        {
          label: `before (${path.basename(values.before)}: tsx, Baileys loaded by every command)`,
          root: path.resolve(values.before),
          env: {},
        },
      ]),
  { label: 'sources through tsx (WAGW_RUN_SOURCES=1)', root: here, env: { WAGW_RUN_SOURCES: '1' } },
  { label: 'compiled (dist/, what npm start runs)', root: here, env: {} },
];
// bin/wagw would run the sources instead of a stale build, and the figures would be mislabelled.
if (!compiledIsCurrent(here)) throw new Error('dist/ is missing or older than src/: npm run build first');

const results = new Map<string, Figures>();
for (const variant of variants) results.set(variant.label, { cliMs: [], cliCpuMs: [], serveMs: [], serveCpuMs: [], idleRssMiB: [] });
// Rounds interleave the variants, so that a change in the machine's load falls on all of them alike.
for (let round = 0; round < rounds; round++) {
  for (const variant of variants) {
    const figures = results.get(variant.label)!;
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-startup-'));
    const databaseUrl = `sqlite:${path.join(directory, 'wagw.db')}`;
    try {
      await runCli(variant, directory, databaseUrl, ['migrate', '--json']);
      const cli = await runCli(variant, directory, databaseUrl, ['account', 'list', '--json']);
      figures.cliMs.push(cli.wallMs);
      figures.cliCpuMs.push(cli.cpuMs);
      const started = performance.now();
      const server = await startGatewayProcess({ databaseUrl, directory, root: variant.root, env: variant.env });
      figures.serveMs.push(performance.now() - started);
      figures.serveCpuMs.push(cpuMsOf(server.pid));
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      figures.idleRssMiB.push(residentMiB(server.pid));
      await server.stop();
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  }
}

const ms = (value: number) => `${Math.round(value)} ms`;
const mib = (value: number) => `${value.toFixed(0)} MiB`;
const rows = variants.map((variant) => {
  const figures = results.get(variant.label)!;
  return `| ${variant.label} | ${minMedianMax(figures.cliCpuMs, ms)} | ${minMedianMax(figures.cliMs, ms)} | ${minMedianMax(figures.serveCpuMs, ms)} | ${minMedianMax(figures.serveMs, ms)} | ${minMedianMax(figures.idleRssMiB, mib)} |`;
});
const report = `## Start time and idle memory (bench/startup.ts)

${new Date().toISOString().slice(0, 10)}, commit ${currentCommit()}, ${machineDescription()}; load average at the end ${os
  .loadavg()
  .map((load) => load.toFixed(1))
  .join(', ')}.
${rounds} rounds, min / **median** / max. SQLite, the sandbox engine, an empty database. CPU is user + system time, which a
loaded machine stretches far less than wall time. "account list" is the whole command, from spawning node to its exit.
"serve" is from spawning \`wagw serve\` to its first 200 on /health (polled every 100 ms; CPU read at that moment).
"Idle RSS" is the server's resident memory ${IDLE_MS / 1000} s after it answered.

| Run as | account list CPU | account list wall | serve CPU | serve wall | idle RSS |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
process.stdout.write(report);
writeReportSection('startup', report);

/** Runs the command under /usr/bin/time, for the child's own CPU time. */
function runCli(variant: Variant, directory: string, databaseUrl: string, args: string[]): Promise<{ wallMs: number; cpuMs: number }> {
  const started = performance.now();
  const timings = path.join(directory, 'time.txt');
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', timings, process.execPath, path.join(variant.root, 'bin/wagw'), ...args], {
      cwd: variant.root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: databaseUrl,
        WAGW_DATA_DIR: directory,
        WAGW_SECRET_KEY: BENCH_SECRET_KEY,
        ...variant.env,
      },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`wagw ${args.join(' ')} exited ${code}: ${stderr}`));
      const [user, system] = fs.readFileSync(timings, 'utf8').trim().split(/\s+/).map(Number);
      resolve({ wallMs: performance.now() - started, cpuMs: (user! + system!) * 1000 });
    });
  });
}

function residentMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  return kib / 1024;
}

/** The CPU time (user + system) the process has used so far, from /proc. */
function cpuMsOf(pid: number): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
