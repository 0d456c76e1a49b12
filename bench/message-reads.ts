/**
 * npm run bench:message-reads
 *
 * GET /messages on an account with 1,000,000 stored messages, per dialect: the p50 and p99 of a
 * page (50 messages) for each filter, through the real HTTP app (inject), with the messages
 * written through the repositories' batch insert. BENCH_MESSAGES changes the count.
 * Results replace the message-reads section of docs/benchmarks.md.
 */
import os from 'node:os';
import { sql } from 'kysely';
import { operatorScope } from '../src/domain/tenant-scope.ts';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import type { Message, MessageStatus } from '../src/domain/model.ts';
import type { E164 } from '../src/domain/phone.ts';
import { buildApp } from '../src/app.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { insertMessages } from '../src/store/repositories/message-batches.ts';
import { createTestDatabase, type Dialect } from '../test/support/databases.ts';
import { seedAccount } from '../test/support/gateway.ts';
import { BENCH_SECRET_KEY, currentCommit, machineDescription, percentile, writeReportSection } from './support.ts';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const PEERS = 2_000;
const REQUESTS = 300;
const BATCH = 5_000;
const DAY = 86_400_000;

interface QueryResult {
  name: string;
  p50: number;
  p99: number;
  rows: number;
}

/** Outbound sends to 2,000 peers from two numbers and their replies, over 30 days; 0.5 % failed. */
function messageAt(index: number, accountId: string, numbers: { id: string; phone: string }[], start: number): Message {
  const number = numbers[index % 2]!;
  const peer = `+1415${String(5_000_000 + (index % PEERS)).padStart(7, '0')}` as E164;
  const outbound = index % 3 !== 0;
  const status: MessageStatus = !outbound ? 'received' : index % 200 === 1 ? 'failed' : index % 2 === 0 ? 'read' : 'delivered';
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
    status,
    engineMessageId: `BENCH${index}`,
    createdAt: new Date(start + Math.floor((index / MESSAGES) * 30 * DAY)),
  };
}

async function measure(dialect: Dialect): Promise<{ results: QueryResult[]; fillSeconds: number }> {
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
    const numbers = await Promise.all(account.phones.map((phone) => gateway.numbers.findNumber(operatorScope(), phone)));
    const start = Date.now() - 31 * DAY;
    const filling = Date.now();
    for (let first = 0; first < MESSAGES; first += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, MESSAGES - first) }, (_unused, offset) =>
        messageAt(first + offset, account.accountId, numbers, start),
      );
      await gateway.store.db.transaction().execute((trx) => insertMessages(trx, batch));
    }
    const fillSeconds = (Date.now() - filling) / 1000;
    // As autovacuum would by the time a table grew this large: the planner sees the new rows.
    if (dialect === 'postgres') await sql`analyze messages`.execute(gateway.store.db);

    const app = await buildApp(gateway);
    await app.ready();
    const middle = new Date(start + 15 * DAY).toISOString();
    const page = async (query: string) => {
      const response = await app.inject({
        method: 'GET',
        url: `/api/messages?${query}`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
      return response.json() as { messages: unknown[]; next_cursor: string | null };
    };
    // A cursor deep in the history: keyset pages cost the same wherever they start.
    let deep = await page('limit=100');
    for (let step = 0; step < 20 && deep.next_cursor !== null; step++)
      deep = await page(`limit=100&cursor=${encodeURIComponent(deep.next_cursor!)}`);
    const queries: [string, string][] = [
      ['newest page', 'limit=50'],
      ['one peer', `peer=${encodeURIComponent('+14155001234')}&limit=50`],
      ['one of our numbers', `phone=${encodeURIComponent(account.phones[1]!)}&limit=50`],
      ['status=failed (0.5 %)', 'status=failed&limit=50'],
      ['inbound since mid-month', `direction=inbound&since=${encodeURIComponent(middle)}&limit=50`],
      ['until mid-month', `until=${encodeURIComponent(middle)}&limit=50`],
      ['page 21 by cursor', `limit=50&cursor=${encodeURIComponent(deep.next_cursor ?? '')}`],
    ];
    const results: QueryResult[] = [];
    for (const [name, query] of queries) {
      const timings: number[] = [];
      let rows = 0;
      for (let round = 0; round < REQUESTS; round++) {
        const began = process.hrtime.bigint();
        rows = (await page(query)).messages.length;
        timings.push(Number(process.hrtime.bigint() - began) / 1e6);
      }
      timings.sort((a, b) => a - b);
      results.push({ name, p50: percentile(timings, 0.5), p99: percentile(timings, 0.99), rows });
    }
    await app.close();
    return { results, fillSeconds };
  } finally {
    await gateway.close();
    await database.drop();
  }
}

const measured: Record<string, { results: QueryResult[]; fillSeconds: number }> = {};
for (const dialect of ['sqlite', 'postgres'] as const) {
  measured[dialect] = await measure(dialect);
  console.log(dialect, JSON.stringify(measured[dialect]));
}
const row = (name: string) => {
  const of = (dialect: string) => measured[dialect]!.results.find((result) => result.name === name)!;
  const cell = (result: QueryResult) => `${result.p50.toFixed(1)} / ${result.p99.toFixed(1)} ms (${result.rows} rows)`;
  return `| ${name} | ${cell(of('sqlite'))} | ${cell(of('postgres'))} |`;
};
writeReportSection(
  'bench:message-reads',
  `## Reading messages (\`npm run bench:message-reads\`)

${new Date().toISOString().slice(0, 10)}, commit ${currentCommit()}, ${machineDescription()}.
One account with ${MESSAGES.toLocaleString('en')} messages (two numbers, ${PEERS.toLocaleString('en')} peers, 30 days; written in
${measured.sqlite!.fillSeconds.toFixed(0)} s on SQLite and ${measured.postgres!.fillSeconds.toFixed(0)} s on PostgreSQL). Each row is ${REQUESTS} sequential
\`GET /api/messages\` requests through the HTTP app, with the key check, the query and the JSON answer; p50 / p99.

| page | SQLite | PostgreSQL |
|---|---|---|
${measured.sqlite!.results.map((result) => row(result.name)).join('\n')}

Each filter reads its page through an index ordered by time (migration 0014), so the p50 is
the cost of about one page of rows, whatever the account's size. The p99s are this shared
two-core machine, where garbage collection and the database server take their turns.
`,
);
process.exit(0);
