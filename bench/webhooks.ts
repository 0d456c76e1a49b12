/**
 * npm run bench:webhooks
 *
 * 1. Incoming (sandbox) → received by a local endpoint: p50 and p99 at a fixed 1,000 messages/s,
 *    driven over real HTTP against a listening gateway.
 * 2. The most deliveries per second the worker sustains: a backlog is queued with the worker
 *    stopped, then drained against a fast local endpoint.
 * Both on SQLite and on PostgreSQL (WAGW_TEST_POSTGRES_URL, which `npm run bench:webhooks` sets).
 */
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/http/server.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { incomingMessagePayload } from '../src/domain/webhooks.ts';
import { newId } from '../src/domain/ids.ts';
import type { Message } from '../src/domain/model.ts';
import type { E164 } from '../src/domain/phone.ts';
import { enqueueEvent } from '../src/webhooks/outbox.ts';
import { createTestDatabase, type Dialect } from '../test/support/databases.ts';
import { fork } from 'node:child_process';
import { currentCommit, machineDescription, percentile, writeReportSection } from './support.ts';

const RATE_PER_SECOND = 1_000;
const LATENCY_SECONDS = 5;
const BACKLOG = 20_000;

interface Result {
  dialect: Dialect;
  /** From the request to its 200: the durable commit of the message with its deliveries. */
  answerP50Ms: number;
  answerP99Ms: number;
  p50Ms: number;
  p99Ms: number;
  latencyMessages: number;
  deliveriesPerSecond: number;
}

async function benchmark(dialect: Dialect): Promise<Result> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
    WAGW_SECRET_KEY: '5e'.repeat(32),
  });
  const gateway = await createGateway(config, createLogger(config));
  const arrivals = new Map<string, number>();
  const receiver = await startReceiverProcess(arrivals);
  const account = await gateway.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
  const number = await gateway.numbers.addNumber({ accountId: account.id, phone: '+447700900001' });
  const key = await gateway.apiKeys.createKey({ accountId: account.id });
  await gateway.webhooks.createWebhook(account.id, { url: receiver.url, eventTypes: ['message'] });
  const server = await startServer(gateway);
  const port = Number(new URL(server.address).port);

  // Phase 1: open-loop load at a fixed rate from another process; latency runs from just
  // before the request to the moment the endpoint has the delivery.
  const load = await runLoadProcess({ port, apiKey: key.plaintext, toPhone: number.phone, ratePerSecond: RATE_PER_SECOND, total: RATE_PER_SECOND * LATENCY_SECONDS });
  const sentAt = new Map(load.map((entry) => [entry.text, entry.sentAt]));
  const answeredAt = new Map(load.map((entry) => [entry.text, entry.answeredAt]));
  const statuses = new Map<number, number>();
  for (const entry of load) statuses.set(entry.status, (statuses.get(entry.status) ?? 0) + 1);
  const total = load.length;
  progress = () => `answers ${JSON.stringify([...statuses])}, arrived ${arrivals.size}`;
  await waitUntil(() => arrivals.size >= total, 30_000);
  const answerLatencies = [...sentAt].map(([text, at]) => (answeredAt.get(text) ?? Number.NaN) - at).filter(Number.isFinite).sort((a, b) => a - b);
  const latencies = [...sentAt].map(([text, at]) => (arrivals.get(text) ?? Number.NaN) - at).filter(Number.isFinite).sort((a, b) => a - b);

  // Phase 2: a backlog drained by the worker alone.
  await gateway.deliveryWorker.stop();
  arrivals.clear();
  for (let offset = 0; offset < BACKLOG; offset += 500) {
    await gateway.committer.run(async (trx) => {
      for (let index = offset; index < Math.min(BACKLOG, offset + 500); index++) {
        const message: Message = {
          id: newId('message'), accountId: account.id, numberId: number.id, direction: 'inbound',
          fromPhone: '+14155550100' as E164, fromLid: null, toPhone: number.phone, text: `backlog-${index}`, contentKind: 'text',
          status: 'received', engineMessageId: null, createdAt: new Date(),
        };
        await enqueueEvent(trx, account.id, incomingMessagePayload(message), message.createdAt);
      }
    });
  }
  const drainStarted = performance.now();
  gateway.deliveryWorker.start();
  await waitUntil(() => arrivals.size >= BACKLOG, 120_000);
  const drainSeconds = (performance.now() - drainStarted) / 1000;

  await server.stop();
  await receiver.close();
  await database.drop();
  return {
    dialect,
    answerP50Ms: percentile(answerLatencies, 0.5),
    answerP99Ms: percentile(answerLatencies, 0.99),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    latencyMessages: latencies.length,
    deliveriesPerSecond: BACKLOG / drainSeconds,
  };
}

let progress = () => '';

interface LoadReport {
  text: string;
  sentAt: number;
  answeredAt: number;
  status: number;
}

/** Runs bench/load-process.ts to completion and returns what it measured. */
async function runLoadProcess(order: { port: number; apiKey: string; toPhone: string; ratePerSecond: number; total: number }): Promise<LoadReport[]> {
  const child = fork(new URL('./load-process.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'] });
  const done = new Promise<LoadReport[]>((resolve) => child.once('message', (message: { report: LoadReport[] }) => resolve(message.report)));
  child.send(order);
  return done;
}

/** Starts bench/receiver-process.ts and collects the arrival times it reports. */
async function startReceiverProcess(arrivals: Map<string, number>): Promise<{ url: string; close(): Promise<void> }> {
  const child = fork(new URL('./receiver-process.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => {
    child.on('message', (message: { port?: number; arrivals?: [string, number][] }) => {
      if (message.port !== undefined) resolve(message.port);
      for (const [text, at] of message.arrivals ?? []) arrivals.set(text, at);
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: async () => {
      child.disconnect();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`The benchmark timed out waiting for deliveries (${progress()}).`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const results: Result[] = [];
for (const dialect of (process.env.BENCH_DIALECTS?.split(',') ?? ['sqlite', 'postgres']) as Dialect[]) {
  results.push(await benchmark(dialect));
  console.log(JSON.stringify(results.at(-1)));
}
const row = (result: Result) =>
  `| ${result.dialect} | ${result.answerP50Ms.toFixed(1)} / ${result.answerP99Ms.toFixed(1)} ms | ${result.p50Ms.toFixed(1)} ms | ${result.p99Ms.toFixed(1)} ms | ${result.latencyMessages} | ${Math.round(result.deliveriesPerSecond).toLocaleString('en')} /s |`;
writeReportSection(
  'bench:webhooks',
  `## Webhook delivery (\`npm run bench:webhooks\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.
The load generator and the endpoint each run in a process of their own; all share the machine's two cores with the gateway and, for PostgreSQL, its server.

| database | incoming 200, p50 / p99 | incoming → endpoint p50 at ${RATE_PER_SECOND}/s | p99 | messages | sustained deliveries |
|---|---|---|---|---|---|
${results.map(row).join('\n')}

Targets: p99 ≤ 50 ms at 1,000 messages/s, and ≥ 5,000 deliveries/s.
Latency runs from just before \`POST /sandbox/receive\` to the endpoint having the signed delivery:
it includes the durable commit of the message with its delivery, the worker's wake-up, signing
and the HTTP request. Throughput drains a backlog of ${BACKLOG.toLocaleString('en')} queued deliveries with the
default concurrency (${loadConfig({}).webhooks.maxInFlight} in flight, ${loadConfig({}).webhooks.maxInFlightPerEndpoint} per endpoint) to one endpoint.`,
);
process.exit(0);
