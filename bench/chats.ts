/**
 * npm run bench:chats
 *
 * GET /chats for one number with 100,000 messages over 5,000 chats, per dialect: the p50 and p99
 * of a page (50 chats) at the top of the list and deep in it by cursor, through the real HTTP app
 * (inject), with the chat rows kept by the same statement the send and receive paths run. The
 * query plan of a page is printed and checked to use the chat list's index rather than a scan.
 * BENCH_MESSAGES and BENCH_CHATS change the counts. Results replace the chats section of
 * docs/benchmarks.md.
 */
import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import { operatorScope } from '../src/domain/tenant-scope.ts';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import type { Message } from '../src/domain/model.ts';
import type { E164 } from '../src/domain/phone.ts';
import { buildApp } from '../src/app.ts';
import { createGateway, createLogger } from '../src/main.ts';
import type { Database } from '../src/store/schema.ts';
import { insertMessages } from '../src/store/repositories/message-batches.ts';
import { listChats, noteChatMessages } from '../src/store/repositories/chats.ts';
import { createTestDatabase, type Dialect } from '../test/support/databases.ts';
import { seedAccount } from '../test/support/gateway.ts';
import { BENCH_SECRET_KEY, currentCommit, machineDescription, percentile, writeReportSection } from './support.ts';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
const CHATS = Number(process.env.BENCH_CHATS ?? 5_000);
const REQUESTS = 300;
const BATCH = 1_000;
const DAY = 86_400_000;

interface PageResult {
  name: string;
  p50: number;
  p99: number;
  rows: number;
}

/** Half sent, half received, spread over the chats and 30 days. */
function messageAt(index: number, accountId: string, number: { id: string; phone: string }, start: number): Message {
  const peer = `+1415${String(6_000_000 + ((index * 7919) % CHATS)).padStart(7, '0')}` as E164;
  const outbound = index % 2 === 0;
  return {
    id: newId('message'),
    accountId,
    numberId: number.id,
    direction: outbound ? 'outbound' : 'inbound',
    fromPhone: outbound ? (number.phone as E164) : peer,
    fromLid: null,
    toPhone: outbound ? peer : (number.phone as E164),
    text: `message ${index}`,
    contentKind: 'text',
    mediaId: null,
    structured: null,
    status: outbound ? 'delivered' : 'received',
    engineMessageId: `BENCH${index}`,
    createdAt: new Date(start + Math.floor((index / MESSAGES) * 30 * DAY)),
  };
}

/** The plan of one page's query, as the database explains it. */
async function planOf(
  db: Kysely<Database>,
  dialect: Dialect,
  numberId: string,
  before: { lastActivityAt: number; chatId: string },
): Promise<string> {
  const query = db
    .selectFrom('chats')
    .selectAll()
    .where('number_id', '=', numberId)
    .where((eb) => eb(eb.refTuple('last_activity_at', 'chat_id'), '<', eb.tuple(before.lastActivityAt, before.chatId)))
    .orderBy('last_activity_at', 'desc')
    .orderBy('chat_id', 'desc')
    .limit(51)
    .compile();
  const explain = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
  const rows = await db.executeQuery<Record<string, unknown>>({ ...query, sql: `${explain}${query.sql}` });
  return rows.rows.map((row) => String(row.detail ?? row['QUERY PLAN'])).join('\n');
}

async function measure(dialect: Dialect): Promise<{ results: PageResult[]; fillSeconds: number; plan: string }> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: BENCH_SECRET_KEY,
    WAGW_MEDIA_DIR: os.tmpdir(),
  });
  const gateway = await createGateway(config, createLogger(config));
  try {
    const account = await seedAccount(gateway, { plan: 'enterprise', numbers: 2 });
    const number = await gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
    const neighbour = await gateway.numbers.findNumber(operatorScope(), account.phones[1]!);
    const start = Date.now() - 31 * DAY;
    const filling = Date.now();
    for (let first = 0; first < MESSAGES; first += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, MESSAGES - first) }, (_unused, offset) =>
        messageAt(first + offset, account.accountId, number, start),
      );
      // The other number's chats share the table, as an account's numbers do.
      const other = batch.slice(0, 100).map((_message, offset) => ({
        ...messageAt(MESSAGES + first + offset, account.accountId, neighbour, start),
        id: newId('message'),
      }));
      await gateway.store.db.transaction().execute(async (trx) => {
        await insertMessages(trx, [...batch, ...other]);
        await noteChatMessages(trx, batch);
        await noteChatMessages(trx, other);
      });
    }
    const fillSeconds = (Date.now() - filling) / 1000;
    if (dialect === 'postgres') await sql`analyze chats`.execute(gateway.store.db);

    const app = await buildApp(gateway);
    await app.ready();
    const page = async (query: string) => {
      const response = await app.inject({
        method: 'GET',
        url: `/api/chats?from_phone=${encodeURIComponent(number.phone)}&${query}`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
      return response.json() as { chats: unknown[]; next_cursor: string | null };
    };
    let deep = await page('limit=100');
    for (let step = 0; step < 40 && deep.next_cursor !== null; step++)
      deep = await page(`limit=100&cursor=${encodeURIComponent(deep.next_cursor!)}`);
    const [lastActivityAt, ...chatId] = (deep.next_cursor ?? '0.').split('.');
    const plan = await planOf(gateway.store.db, dialect, number.id, { lastActivityAt: Number(lastActivityAt), chatId: chatId.join('.') });
    if (!/chats_number_activity_idx/.test(plan))
      throw new Error(`${dialect}: a page of chats does not use the chat list's index:\n${plan}`);
    // The list's repository answers in order; checked once, so that the figures are of a right answer.
    const top = await listChats(gateway.store.db, number.id, undefined, 2);
    if (top.length !== 2 || Number(top[0]!.last_activity_at) < Number(top[1]!.last_activity_at))
      throw new Error('the chat list is not latest first');
    const queries: [string, string][] = [
      ['first page', 'limit=50'],
      ['page 41 by cursor', `limit=50&cursor=${encodeURIComponent(deep.next_cursor ?? '')}`],
    ];
    const results: PageResult[] = [];
    for (const [name, query] of queries) {
      const timings: number[] = [];
      let rows = 0;
      for (let round = 0; round < REQUESTS; round++) {
        const began = process.hrtime.bigint();
        rows = (await page(query)).chats.length;
        timings.push(Number(process.hrtime.bigint() - began) / 1e6);
      }
      timings.sort((a, b) => a - b);
      results.push({ name, p50: percentile(timings, 0.5), p99: percentile(timings, 0.99), rows });
    }
    await app.close();
    return { results, fillSeconds, plan };
  } finally {
    await gateway.close();
    await database.drop();
  }
}

const measured: Record<string, { results: PageResult[]; fillSeconds: number; plan: string }> = {};
// The figures mean little on a machine others are loading; the report says how loaded it was.
const loadAtStart = os.loadavg()[0]!;
for (const dialect of ['sqlite', 'postgres'] as const) {
  measured[dialect] = await measure(dialect);
  console.log(dialect, JSON.stringify(measured[dialect]));
}
const row = (name: string) => {
  const of = (dialect: string) => measured[dialect]!.results.find((result) => result.name === name)!;
  const cell = (result: PageResult) => `${result.p50.toFixed(1)} / ${result.p99.toFixed(1)} ms (${result.rows} chats)`;
  return `| ${name} | ${cell(of('sqlite'))} | ${cell(of('postgres'))} |`;
};
writeReportSection(
  'bench:chats',
  `## The chat list (\`npm run bench:chats\`)

${new Date().toISOString().slice(0, 10)}, commit ${currentCommit()}, ${machineDescription()}.
One number with ${MESSAGES.toLocaleString('en')} messages over ${CHATS.toLocaleString('en')} chats (30 days), beside a second number of the
account with a tenth as many; written with their chat rows in ${measured.sqlite!.fillSeconds.toFixed(0)} s on SQLite and
${measured.postgres!.fillSeconds.toFixed(0)} s on PostgreSQL. Each row is ${REQUESTS} sequential \`GET /api/chats\` requests through the
HTTP app, with the key check, the page, its last messages and the JSON answer; p50 / p99.
The machine's one-minute load average was ${loadAtStart.toFixed(1)} when the run began and ${os.loadavg()[0]!.toFixed(1)} when it ended.

| page | SQLite | PostgreSQL |
|---|---|---|
${measured.sqlite!.results.map((result) => row(result.name)).join('\n')}

A page is one range of the index \`chats_number_activity_idx\` (number_id, last_activity_at,
chat_id), read backwards from the cursor (migration 0021); the plans of a deep page:

\`\`\`
SQLite:     ${measured.sqlite!.plan.split('\n').join('\n            ')}
PostgreSQL: ${measured.postgres!.plan.split('\n').join('\n            ')}
\`\`\`
`,
);
process.exit(0);
