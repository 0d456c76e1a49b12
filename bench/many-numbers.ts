/**
 * npm run bench:many-numbers
 *
 * A gateway holding 10,000 sandbox numbers across 1,000 accounts: how long it takes to start
 * (createGateway and startServer until listening, which starts every number's session), and
 * how much memory the idle numbers hold. Each measurement runs in a fresh child process, with
 * --expose-gc so that memory is read after a full collection; the same child against a
 * database with no numbers is the baseline. On SQLite and on PostgreSQL (WAGW_TEST_POSTGRES_URL,
 * which `npm run bench:many-numbers` sets).
 *
 * The file is both the benchmark and, with the argument `child`, the measured process.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import type { E164 } from '../src/domain/phone.ts';
import { startServer } from '../src/http/server.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { insertAccount } from '../src/store/repositories/accounts.ts';
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

interface ChildReport {
  /** createGateway (migrations included) through startServer listening. */
  startupMs: number;
  /** Of that, supervisor.startAll alone, timed once more after the start. */
  startAllMs: number;
  /** One pass of the once-a-minute resumeLinkedSessions. */
  resumeMs: number;
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
  const startAllStarted = performance.now();
  await gateway.keeper.tickSoon();
  const startAllMs = performance.now() - startAllStarted;
  const resumeStarted = performance.now();
  await gateway.keeper.tickSoon();
  const resumeMs = performance.now() - resumeStarted;
  // Two collections with a pause between them, so that memory freed by finalizers is gone too.
  global.gc!();
  await new Promise((resolve) => setTimeout(resolve, 200));
  global.gc!();
  const memory = process.memoryUsage();
  const report: ChildReport = { startupMs, startAllMs, resumeMs, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed };
  await server.stop();
  process.send!(report, () => process.exit(0));
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
          await insertNumber(trx, {
            id: newId('number'),
            accountId,
            holderUserId: null,
            // Distinct UK mobile numbers; the repository stores them as given.
            phone: `+447700${String(index * NUMBERS_PER_ACCOUNT + slot).padStart(6, '0')}` as E164,
            engine: 'sandbox',
            status: 'connected',
            statusReason: null,
            createdAt,
            updatedAt: createdAt,
          });
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
    return `| ${dialect} | ${Math.round(empty.startupMs)} ms | ${Math.round(full.startupMs)} ms | ${Math.round(full.startAllMs)} ms | ${full.resumeMs.toFixed(1)} ms | ${megabytes(empty.rssBytes)} / ${megabytes(full.rssBytes)} MB | **${perThousand.toFixed(2)} MB** | ${perThousand <= TARGET_MEGABYTES_PER_THOUSAND ? 'yes' : 'no'} | ${heapPerThousand.toFixed(1)} KB |`;
  };
  writeReportSection(
    'bench:many-numbers',
    `## Many idle numbers (\`npm run bench:many-numbers\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.

| database | startup, no numbers | startup, ${NUMBERS.toLocaleString('en')} numbers | of which starting every session | a resume pass | RSS after GC, none / ${NUMBERS.toLocaleString('en')} | RSS per 1,000 idle numbers | ≤ ${TARGET_MEGABYTES_PER_THOUSAND} MB? | JS heap per 1,000 |
|---|---|---|---|---|---|---|---|---|
${results.map(row).join('\n')}

${NUMBERS.toLocaleString('en')} sandbox numbers across ${ACCOUNTS.toLocaleString('en')} accounts. Startup runs from the child process's first line of
work to the server listening: \`createGateway\` (opening the database, migrations already applied) and
\`startServer\` (\`supervisor.startAll\` over every number, the listener, the delivery worker and
the first sweep of interrupted sends). "Starting every session" times \`startAll\` once more on
its own after the start, and "a resume pass" the once-a-minute \`resumeLinkedSessions\`. RSS is
read after two full collections (\`--expose-gc\`); per 1,000 numbers is (RSS with ${NUMBERS.toLocaleString('en')} − RSS with none) / ${NUMBERS / 1_000}.
RSS moves by a few megabytes between runs of the same process (the allocator keeps some of what
starting released), so the JS heap, which does not, is shown beside it.
Each figure is the run with the median RSS of ${RUNS}, baseline and full runs alternating, each in a fresh process.`,
  );
}
