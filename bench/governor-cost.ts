/**
 * npm run bench:governor-cost
 *
 * What the send governor costs a send, against the number's history and its queue (issue 41,
 * ADR 0048), on SQLite and PostgreSQL (BENCH_DIALECTS), in one run per database:
 * - sandbox numbers of one enterprise account whose histories hold 0, 10,000 and 100,000 sends
 *   released by the governor over the last 23 hours, and whose queues hold 5,000 and 20,000
 *   waiting messages, all written directly in SQL (as the send path leaves them);
 * - `wagw serve` in its own process; for each number in turn, a block of BENCH_GOVERNOR_BLOCK
 *   (1,000) sends by BENCH_CONNECTIONS (50) clients with no policy, then a block with a policy
 *   that lets every send go at once (every rule on, none binding), the order of the two swapped
 *   each round, BENCH_ROUNDS (3) rounds: the gateway's CPU per send from /proc (and on PostgreSQL
 *   the database server's), interleaved so that the machine's load weighs on both alike;
 * - then DELETE /numbers/{id}/queue on the number with the largest queue: how long the answer
 *   took, and how long until the queue was empty.
 * A number's first governed send reads its ledger (its day and its queue) once; its time is
 * reported apart, and a warm-up block on each number precedes the measured ones.
 *
 * BENCH_CPU_PROFILE_DIR profiles instead of measuring: per database, a gateway under --cpu-prof
 * for each of the two ways (no policy, the permissive policy), each sending a warm-up block and
 * BENCH_ROUNDS blocks (the profile's samples of those only) from the number with the longest history (BENCH_GOVERNOR_PROFILE_SUBJECT,
 * its index in the table), and prints each profile's top five self-time frames
 * (bench/profile-top.ts); docs/benchmarks.md is left alone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import { operatorScope } from '../src/domain/tenant-scope.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { createTestDatabase, type Dialect, type TestDatabase } from '../test/support/databases.ts';
import {
  assertAllAnswered,
  BENCH_SECRET_KEY,
  currentCommit,
  machineDescription,
  median,
  postgresCpuSeconds,
  postmasterPidOf,
  processCpuSeconds,
  runAutocannon,
  startGatewayProcess,
  writeReportSection,
} from './support.ts';
import { renderTopFrames, topSelfFrames } from './profile-top.ts';

const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as Dialect[];
const BLOCK = Number(process.env.BENCH_GOVERNOR_BLOCK ?? 1_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HISTORIES = [0, 10_000, 100_000];
const QUEUES = [5_000, 20_000];
const INSERT_BATCH = 500;
/** Every rule on, none of them binding: what a decision costs when it lets the send go. */
const PERMISSIVE = {
  min_gap_ms: 0,
  per_minute: 1_000_000,
  per_hour: 1_000_000,
  per_day: 1_000_000,
  // 0 keeps the rule on without binding: 50 clients sending to one recipient decide several sends
  // in one millisecond, which any gap of 1 ms or more would rightly hold back.
  per_recipient_gap_ms: 0,
  first_contacts_per_day: 1_000_000,
};
const TEXT = 'Your code is 123456';

interface Subject {
  label: string;
  phone: string;
  id: string;
  history: number;
  queued: number;
}

interface Block {
  cpuMicroseconds: number;
  databaseCpuMicroseconds: number;
}

interface DialectResult {
  dialect: Dialect;
  subjects: Subject[];
  off: Map<string, Block[]>;
  governed: Map<string, Block[]>;
  /** The first governed send of each number: its ledger read from the database. */
  firstSendMs: Map<string, number>;
  clear: { answerMs: number; emptyMs: number; cancelled: number; status: number };
  loadAverages: number[];
}

const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
const PROFILE_SUBJECT = Number(process.env.BENCH_GOVERNOR_PROFILE_SUBJECT ?? HISTORIES.length - 1);
if (PROFILE_DIR !== undefined) {
  for (const dialect of DIALECTS) await profileDialect(dialect, path.resolve(PROFILE_DIR));
  process.exit(0);
}

const results: DialectResult[] = [];
for (const dialect of DIALECTS) {
  results.push(await measureDialect(dialect));
  // Each database's table as soon as it is measured, so a later failure does not lose it.
  console.log(render(results.slice(-1)));
}
const report = render(results);
console.log(report);
writeReportSection('governor-cost', report);

async function measureDialect(dialect: Dialect): Promise<DialectResult> {
  const databases: TestDatabase[] = [];
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-governor-cost-'));
  try {
    const database = await createTestDatabase(dialect);
    databases.push(database);
    const { apiKey, subjects } = await seed(database.url);
    const gateway = await startGatewayProcess({ databaseUrl: database.url, directory, env: { LOG_LEVEL: 'warn' } });
    const postmaster = dialect === 'postgres' ? await postmasterPidOf(database.url) : undefined;
    const api = (method: string, urlPath: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${gateway.port}${urlPath}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const setPolicy = async (subject: Subject, policy: unknown) => {
      const answer = await api('PATCH', `/numbers/${encodeURIComponent(subject.phone)}`, { send_policy: policy });
      if (answer.status !== 200) throw new Error(`PATCH ${subject.phone}: ${answer.status} ${await answer.text()}`);
    };
    const block = async (subject: Subject, amount: number): Promise<Block> => {
      const cpuBefore = processCpuSeconds(gateway.pid);
      const databaseBefore = postgresCpuSeconds(postmaster);
      const result = assertAllAnswered(
        await runAutocannon({
          url: `http://127.0.0.1:${gateway.port}/send_message`,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
          fromPhone: subject.phone,
          text: TEXT,
          connections: CONNECTIONS,
          amount,
        }),
        subject.label,
      );
      const answers = result.total2xx;
      return {
        cpuMicroseconds: ((processCpuSeconds(gateway.pid) - cpuBefore) * 1e6) / answers,
        databaseCpuMicroseconds: ((postgresCpuSeconds(postmaster) - databaseBefore) * 1e6) / answers,
      };
    };

    const firstSendMs = new Map<string, number>();
    for (const subject of subjects) {
      await setPolicy(subject, PERMISSIVE);
      const started = performance.now();
      const answer = await api('POST', '/send_message', { from_phone: subject.phone, to_phone: '+447911000001', message: TEXT });
      if (answer.status !== 200 && answer.status !== 202) throw new Error(`first governed send: ${answer.status} ${await answer.text()}`);
      firstSendMs.set(subject.label, performance.now() - started);
      await block(subject, BLOCK);
      await setPolicy(subject, null);
      await block(subject, BLOCK);
    }
    const off = new Map<string, Block[]>(subjects.map((subject) => [subject.label, []]));
    const governed = new Map<string, Block[]>(subjects.map((subject) => [subject.label, []]));
    const loadAverages: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of subjects) {
        const order = round % 2 === 0 ? [null, PERMISSIVE] : [PERMISSIVE, null];
        for (const policy of order) {
          await setPolicy(subject, policy);
          (policy === null ? off : governed).get(subject.label)!.push(await block(subject, BLOCK));
        }
        loadAverages.push(os.loadavg()[0]!);
      }
      console.log(`${dialect}: round ${round + 1} of ${ROUNDS} done`);
    }
    const clear = await clearLargestQueue(subjects.at(-1)!, api);
    await gateway.stop();
    return { dialect, subjects, off, governed, firstSendMs, clear, loadAverages };
  } finally {
    for (const database of databases) await database.drop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** Both ways of sending profiled in a gateway of their own, each profile's top five printed. */
async function profileDialect(dialect: Dialect, profileDir: string): Promise<void> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-governor-cost-'));
  const database = await createTestDatabase(dialect);
  try {
    const { apiKey, subjects } = await seed(database.url);
    const subject = subjects[PROFILE_SUBJECT]!;
    for (const [way, policy] of [
      ['governed', PERMISSIVE],
      ['off', null],
    ] as const) {
      const into = path.join(profileDir, `${dialect}-${way}`);
      fs.rmSync(into, { recursive: true, force: true });
      const gateway = await startGatewayProcess({
        databaseUrl: database.url,
        directory,
        env: { LOG_LEVEL: 'warn' },
        nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${into}`],
      });
      const answer = await fetch(`http://127.0.0.1:${gateway.port}/numbers/${encodeURIComponent(subject.phone)}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ send_policy: policy }),
      });
      if (answer.status !== 200) throw new Error(`PATCH ${subject.phone}: ${answer.status} ${await answer.text()}`);
      let cpuBefore = 0;
      let fromMicroseconds = 0;
      let sent = 0;
      // Round 0 warms up, unprofiled: its samples are left out with the start-up's.
      for (let round = 0; round <= ROUNDS; round++) {
        if (round === 1) {
          cpuBefore = processCpuSeconds(gateway.pid);
          fromMicroseconds = Number(process.hrtime.bigint() / 1_000n);
        }
        const result = assertAllAnswered(
          await runAutocannon({
            url: `http://127.0.0.1:${gateway.port}/send_message`,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
            fromPhone: subject.phone,
            text: TEXT,
            connections: CONNECTIONS,
            amount: BLOCK,
          }),
          subject.label,
        );
        if (round > 0) sent += result.total2xx;
      }
      const toMicroseconds = Number(process.hrtime.bigint() / 1_000n);
      const cpu = ((processCpuSeconds(gateway.pid) - cpuBefore) * 1e6) / sent;
      await gateway.stop();
      const file = fs.readdirSync(into).find((name) => name.endsWith('.cpuprofile'))!;
      const { frames, busyMs } = topSelfFrames(JSON.parse(fs.readFileSync(path.join(into, file), 'utf8')), 5, {
        fromMicroseconds,
        toMicroseconds,
      });
      console.log(
        `${dialect}, ${subject.label}, ${way === 'governed' ? 'permissive policy' : 'no policy'}: ${sent} sends, ${Math.round(cpu)} µs of CPU per send (profiled), load ${os.loadavg()[0]!.toFixed(1)}; ${path.join(into, file)}\n\n${renderTopFrames(frames, busyMs)}\n`,
      );
    }
  } finally {
    await database.drop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

/** DELETE /numbers/{id}/queue: the answer's time, and the time until GET shows the queue empty. */
async function clearLargestQueue(
  subject: Subject,
  api: (method: string, urlPath: string, body?: unknown) => Promise<Response>,
): Promise<DialectResult['clear']> {
  const started = performance.now();
  const answer = await api('DELETE', `/numbers/${encodeURIComponent(subject.phone)}/queue`);
  const answerMs = performance.now() - started;
  const body = (await answer.json()) as { cancelled?: number };
  for (;;) {
    const view = (await (await api('GET', `/numbers/${encodeURIComponent(subject.phone)}/queue?limit=1`)).json()) as { total: number };
    if (view.total === 0) break;
    await sleep(100);
  }
  return { answerMs, emptyMs: performance.now() - started, cancelled: body.cancelled ?? 0, status: answer.status };
}

/** The account, its numbers and its key through the services; the histories and queues in SQL. */
async function seed(databaseUrl: string): Promise<{ apiKey: string; subjects: Subject[] }> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: BENCH_SECRET_KEY });
  const gateway = await createGateway(config, createLogger(config));
  try {
    const account = await gateway.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
    const shapes = [
      ...HISTORIES.map((history) => ({ label: `${history.toLocaleString('en')} sends before`, history, queued: 0 })),
      ...QUEUES.map((queued) => ({ label: `${queued.toLocaleString('en')} queued`, history: 0, queued })),
    ];
    const subjects: Subject[] = [];
    for (const [index, shape] of shapes.entries()) {
      const phone = `+4477009001${String(index).padStart(2, '0')}`;
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone });
      subjects.push({ ...shape, phone, id: number.id });
      await seedRows(gateway.store.db, account.id, number.id, phone, shape.history, 'released');
      await seedRows(gateway.store.db, account.id, number.id, phone, shape.queued, 'waiting');
    }
    const key = await gateway.apiKeys.createKey({ accountId: account.id, name: 'bench' });
    return { apiKey: key.plaintext, subjects };
  } finally {
    await gateway.close();
  }
}

/**
 * Rows as the governor leaves them: sends it released over the last 23 hours (a tenth of them
 * first contacts), or messages waiting their turn from an hour ahead, a second apart.
 */
async function seedRows(
  db: Awaited<ReturnType<typeof createGateway>>['store']['db'],
  accountId: string,
  numberId: string,
  phone: string,
  count: number,
  kind: 'released' | 'waiting',
): Promise<void> {
  const now = Date.now();
  for (let first = 0; first < count; first += INSERT_BATCH) {
    const values = [];
    for (let index = first; index < Math.min(count, first + INSERT_BATCH); index++) {
      const at =
        kind === 'released' ? now - 23 * 3_600_000 + Math.floor((index * 23 * 3_600_000) / count) : now + 3_600_000 + index * 1_000;
      values.push({
        id: newId('message'),
        account_id: accountId,
        number_id: numberId,
        direction: 'outbound',
        from_phone: phone,
        from_lid: null,
        to_phone: `+1415555${String(index % 10_000).padStart(4, '0')}`,
        text: TEXT,
        content_kind: 'text',
        media_id: null,
        structured: null,
        status: kind === 'released' ? 'sent' : 'queued',
        engine_message_id: null,
        error_code: null,
        created_at: kind === 'released' ? at : now,
        updated_at: kind === 'released' ? at : now,
        sent_at: kind === 'released' ? at : null,
        released_at: kind === 'released' ? at : null,
        scheduled_for: kind === 'waiting' ? at : null,
        expires_at: kind === 'waiting' ? at + 86_400_000 : null,
        wait_reason: kind === 'waiting' ? 'gap' : null,
        first_contact: index % 10 === 0 ? 1 : 0,
      });
    }
    await db.insertInto('messages').values(values).execute();
  }
}

function render(measured: DialectResult[]): string {
  const microseconds = (value: number) => (Number.isNaN(value) ? '–' : `${Math.round(value)} µs`);
  const sections = measured.map((result) => {
    const rows = result.subjects.map((subject) => {
      const off = result.off.get(subject.label)!;
      const governed = result.governed.get(subject.label)!;
      const offCpu = median(off.map((block) => block.cpuMicroseconds));
      const governedCpu = median(governed.map((block) => block.cpuMicroseconds));
      const database =
        result.dialect === 'postgres'
          ? ` | ${microseconds(median(off.map((block) => block.databaseCpuMicroseconds)))} | ${microseconds(median(governed.map((block) => block.databaseCpuMicroseconds)))}`
          : '';
      return `| ${subject.label} | ${microseconds(offCpu)} | ${microseconds(governedCpu)} | ${(governedCpu / offCpu).toFixed(2)} | ${Math.round(result.firstSendMs.get(subject.label)!)} ms${database} |`;
    });
    const databaseHeader = result.dialect === 'postgres' ? ' | PostgreSQL CPU per send, no policy | …, permissive policy' : '';
    const databaseRule = result.dialect === 'postgres' ? '|---|---' : '';
    const loads = result.loadAverages;
    return `### ${result.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'}

| the number | gateway CPU per send, no policy | …, a permissive policy | ratio | first governed send (ledger read)${databaseHeader} |
|---|---|---|---|---${databaseRule}|
${rows.join('\n')}

Clearing the queue of ${result.subjects.at(-1)!.label} (more by now: each governed block queued ${BLOCK.toLocaleString('en')} behind it): answered ${result.clear.status} in ${Math.round(result.clear.answerMs)} ms (${result.clear.cancelled.toLocaleString('en')} cancelled in the answer), queue empty after ${Math.round(result.clear.emptyMs)} ms.
One-minute load average during the blocks: ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}.`;
  });
  return `## The send governor's cost per send (bench/governor-cost.ts)

${machineDescription()}, commit ${currentCommit()}. Medians of ${ROUNDS} interleaved rounds of ${BLOCK.toLocaleString('en')} sends by ${CONNECTIONS} clients per block; CPU from /proc.

${sections.join('\n\n')}
`;
}
