/**
 * npm run bench:many-numbers
 *
 * A node owning 10,000 sandbox numbers across 1,000 accounts: how long it takes to start
 * (createGateway and startServer until listening, which claims every number's lease and starts
 * its session), what a lease tick costs (one renewal of all 10,000 leases, the heartbeat and the
 * fair-share check), and how much memory the owned numbers hold. Each measurement runs in a fresh child process, with
 * --expose-gc so that memory is read after a full collection; the same child against a
 * database with no numbers is the baseline. On SQLite and on PostgreSQL (WAGW_TEST_POSTGRES_URL,
 * which `npm run bench:many-numbers` sets).
 *
 * The file is both the benchmark and, with the argument `child`, the measured process.
 */
import { fork } from 'node:child_process';
import { newWhatsAppNumber } from '../src/domain/model.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import type { E164 } from '../src/domain/phone.ts';
import { startServer } from '../src/server.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { insertAccount } from '../src/store/repositories/accounts.ts';
import { LeaseKeeper } from '../src/cluster/lease-keeper.ts';
import { insertNumber } from '../src/store/repositories/numbers.ts';
import { createTestDatabase, type Dialect } from '../test/support/databases.ts';
import { currentCommit, machineDescription, writeReportSection } from './support.ts';

const ACCOUNTS = 1_000;
const NUMBERS_PER_ACCOUNT = 10;
const NUMBERS = ACCOUNTS * NUMBERS_PER_ACCOUNT;
/** Child runs per database; the median is reported, as one run can meet a busy moment. */
const RUNS = Number(process.env.BENCH_MANY_NUMBERS_RUNS ?? 3);
const TARGET_MEGABYTES_PER_THOUSAND = 5;
const SECRET_KEY = '5e'.repeat(32);
const TICKS = 20;

interface ChildReport {
  /** createGateway (migrations included) through startServer listening. */
  startupMs: number;
  /** Wall time of one lease tick at rest (renewing every lease, heartbeat, fair share), median of the ticks. */
  tickMs: number;
  /** CPU time of this process per lease tick, averaged over the ticks. */
  tickCpuMs: number;
  /** Statements one tick sends to the database. */
  tickStatements: number;
  /** Leases this node holds after the start: every number. */
  held: number;
  rssBytes: number;
  heapUsedBytes: number;
}

interface Result {
  dialect: Dialect;
  empty: ChildReport;
  full: ChildReport;
}

if (process.argv[2] === 'child') await measureInChild();
else await runBenchmark();

/** The measured process: start a gateway on the given database, then report and exit. */
async function measureInChild(): Promise<void> {
  const started = performance.now();
  const config = loadConfig({
    DATABASE_URL: process.env.BENCH_DATABASE_URL!,
    PORT: '0',
    LOG_LEVEL: 'silent',
    WAGW_DATA_DIR: process.env.BENCH_DATA_DIR!,
    WAGW_SECRET_KEY: SECRET_KEY,
  });
  const gateway = await createGateway(config, createLogger(config));
  const server = await startServer(gateway);
  const startupMs = performance.now() - started;
  const held = gateway.keeper.heldCount();
  // Ticks in a row, as the keeper runs one every third of the TTL; the statements are counted
  // by a Kysely plugin on a second view of the same database, wrapped around the keeper's store.
  const tickTimes: number[] = [];
  const cpuStarted = process.cpuUsage();
  for (let tick = 0; tick < TICKS; tick++) {
    const tickStarted = performance.now();
    await gateway.keeper.tickSoon();
    tickTimes.push(performance.now() - tickStarted);
  }
  const cpu = process.cpuUsage(cpuStarted);
  const tickCpuMs = (cpu.user + cpu.system) / 1_000 / TICKS;
  const tickMs = tickTimes.sort((a, b) => a - b)[Math.floor(TICKS / 2)]!;
  const tickStatements = await countTickStatements(gateway);
  // Two collections with a pause between them, so that memory freed by finalizers is gone too.
  global.gc!();
  await new Promise((resolve) => setTimeout(resolve, 200));
  global.gc!();
  const memory = process.memoryUsage();
  const report: ChildReport = { startupMs, tickMs, tickCpuMs, tickStatements, held, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed };
  await server.stop();
  process.send!(report, () => process.exit(0));
}

/** The statements of one tick, counted on a keeper of its own that shares this node's leases' database. */
async function countTickStatements(gateway: Awaited<ReturnType<typeof createGateway>>): Promise<number> {
  let statements = 0;
  const counting = gateway.store.db.withPlugin({
    transformQuery: (args) => {
      statements += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  const keeper = new LeaseKeeper(
    { ...gateway.store, db: counting },
    { ttlMs: 15_000, maxSessions: null, nodeName: 'counter', nodeUrl: null, drainMs: 1_000, sessionStartsPerSecond: 4 },
    gateway.logger,
  );
  // A command node holding nothing: it takes no share, so this node's leases stay where they are.
  await keeper.startPinned([]);
  statements = 0;
  await keeper.tickSoon();
  const perTick = statements;
  await keeper.stop();
  return perTick;
}

async function runBenchmark(): Promise<void> {
  const results: Result[] = [];
  for (const dialect of (process.env.BENCH_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as Dialect[]) {
    const empty = await createTestDatabase(dialect);
    const full = await createTestDatabase(dialect);
    const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-numbers-'));
    await seed(empty.url, dataDirectory, 0);
    const seedStarted = performance.now();
    await seed(full.url, dataDirectory, ACCOUNTS);
    console.log(`${dialect}: seeded ${NUMBERS} numbers in ${Math.round(performance.now() - seedStarted)} ms`);
    // Baseline and full runs alternate, so that drift on a shared machine hits both alike.
    const emptyRuns: ChildReport[] = [];
    const fullRuns: ChildReport[] = [];
    for (let run = 0; run < RUNS; run++) {
      emptyRuns.push(await runChild(empty.url, dataDirectory));
      fullRuns.push(await runChild(full.url, dataDirectory));
      console.log(JSON.stringify({ dialect, run, empty: emptyRuns.at(-1), full: fullRuns.at(-1) }));
    }
    results.push({ dialect, empty: median(emptyRuns), full: median(fullRuns) });
    await empty.drop();
    await full.drop();
    fs.rmSync(dataDirectory, { recursive: true, force: true });
  }
  if (process.env.BENCH_NO_REPORT === undefined) writeReport(results);
  process.exit(0);
}

/**
 * Creates the schema and `accounts` accounts of ten sandbox numbers each, straight through the
 * repositories in batches: how fast this goes is not what is measured.
 */
async function seed(databaseUrl: string, dataDirectory: string, accounts: number): Promise<void> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', WAGW_DATA_DIR: dataDirectory, WAGW_SECRET_KEY: SECRET_KEY });
  const gateway = await createGateway(config, createLogger(config));
  const createdAt = new Date();
  for (let first = 0; first < accounts; first += 100) {
    await gateway.store.db.transaction().execute(async (trx) => {
      for (let index = first; index < Math.min(accounts, first + 100); index++) {
        const accountId = newId('account');
        await insertAccount(trx, { id: accountId, name: `Bench ${index}`, plan: 'enterprise', customMonthlyLimit: null, createdAt });
        for (let slot = 0; slot < NUMBERS_PER_ACCOUNT; slot++) {
          await insertNumber(
            trx,
            newWhatsAppNumber(
              {
                id: newId('number'),
                accountId,
                // Distinct UK mobile numbers; the repository stores them as given.
                phone: `+447700${String(index * NUMBERS_PER_ACCOUNT + slot).padStart(6, '0')}` as E164,
                engine: 'sandbox',
                status: 'connected',
              },
              createdAt,
            ),
          );
        }
      }
    });
  }
  await gateway.close();
}

function runChild(databaseUrl: string, dataDirectory: string): Promise<ChildReport> {
  const child = fork(new URL(import.meta.url).pathname, ['child'], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, BENCH_DATA_DIR: dataDirectory },
  });
  return new Promise((resolve, reject) => {
    child.once('message', (report: ChildReport) => resolve(report));
    child.once('exit', (code) => reject(new Error(`the measured gateway exited with ${code} before reporting`)));
  });
}

/** The run with the median RSS, whole, so that its figures belong together. */
function median(runs: ChildReport[]): ChildReport {
  return [...runs].sort((a, b) => a.rssBytes - b.rssBytes)[Math.floor(runs.length / 2)]!;
}

function writeReport(results: Result[]): void {
  const megabytes = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  const row = ({ dialect, empty, full }: Result) => {
    const perThousand = (full.rssBytes - empty.rssBytes) / 2 ** 20 / (NUMBERS / 1_000);
    const heapPerThousand = (full.heapUsedBytes - empty.heapUsedBytes) / 2 ** 10 / (NUMBERS / 1_000);
    const cpuShare = (full.tickCpuMs / 5_000) * 100;
    return `| ${dialect} | ${Math.round(empty.startupMs)} ms | ${Math.round(full.startupMs)} ms | ${full.held.toLocaleString('en')} | ${full.tickMs.toFixed(1)} ms | ${full.tickCpuMs.toFixed(1)} ms (${cpuShare.toFixed(2)} % of a core) | ${full.tickStatements} (${(full.tickStatements / 5).toFixed(1)}/s) | ${megabytes(empty.rssBytes)} / ${megabytes(full.rssBytes)} MB | **${perThousand.toFixed(2)} MB** | ${perThousand <= TARGET_MEGABYTES_PER_THOUSAND ? 'yes' : 'no'} | ${heapPerThousand.toFixed(1)} KB |`;
  };
  writeReportSection(
    'bench:many-numbers',
    `## Many owned numbers (\`npm run bench:many-numbers\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.

| database | startup, no numbers | startup, ${NUMBERS.toLocaleString('en')} numbers | leases held | lease tick, wall | lease tick, CPU (at one tick per 5 s) | statements per tick | RSS after GC, none / ${NUMBERS.toLocaleString('en')} | RSS per 1,000 owned numbers | ≤ ${TARGET_MEGABYTES_PER_THOUSAND} MB? | JS heap per 1,000 |
|---|---|---|---|---|---|---|---|---|---|---|
${results.map(row).join('\n')}

${NUMBERS.toLocaleString('en')} sandbox numbers across ${ACCOUNTS.toLocaleString('en')} accounts. Startup runs from the child process's first line of
work to the server listening: \`createGateway\` (opening the database, migrations already applied) and
\`startServer\` (the node runtime: claiming all ${NUMBERS.toLocaleString('en')} leases and connecting every sandbox session to the
in-process network, the listener, the delivery worker and the first sweep). A lease tick is what
a node does every third of the TTL (5 s by default): the heartbeat, one statement renewing every
lease it holds, and the fair-share check; its wall time is the median of ${TICKS} ticks in a row and its
CPU the process's average over them. Statements per tick are counted on the wire. RSS is
read after two full collections (\`--expose-gc\`); per 1,000 numbers is (RSS with ${NUMBERS.toLocaleString('en')} − RSS with none) / ${NUMBERS / 1_000}.
RSS moves by a few megabytes between runs of the same process (the allocator keeps some of what
starting released), so the JS heap, which does not, is shown beside it.
Each figure is the run with the median RSS of ${RUNS}, baseline and full runs alternating, each in a fresh process.`,
  );
}
