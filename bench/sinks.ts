/**
 * npm run bench:sinks
 *
 * Events per second and the gateway's CPU per event, delivered from the outbox to a webhook
 * endpoint (a local HTTP server in a process of its own, answering 204 at once) and to a
 * RabbitMQ sink (Debian's rabbitmq-server, a confirm per message), side by side in one run.
 * Each round queues the same backlog with the delivery worker stopped, then times its drain;
 * the two kinds alternate round by round, so that drift on a shared machine hits both alike.
 * The cost curve is the backlog: BENCH_SINK_BACKLOGS (default 1000,5000) sizes, each drained by
 * both kinds. All on SQLite and on PostgreSQL (WAGW_TEST_POSTGRES_URL, which `npm run
 * bench:sinks` sets); BENCH_DIALECTS=sqlite narrows it, BENCH_NO_REPORT leaves the report alone.
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { connect } from 'amqplib';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import type { Message } from '../src/domain/model.ts';
import type { E164 } from '../src/domain/phone.ts';
import { accountScope, operatorScope } from '../src/domain/tenant-scope.ts';
import { incomingMessagePayload } from '../src/domain/event-payloads.ts';
import { createGateway, createLogger, type Gateway } from '../src/main.ts';
import { countQueuedDeliveries } from '../src/store/repositories/deliveries.ts';
import { CLAIMS_ONLY, enqueueEvent } from '../src/webhooks/outbox.ts';
import { createTestDatabase, type Dialect } from '../test/support/databases.ts';
import { ThrowawayRabbitmq } from '../test/support/rabbitmq.ts';
import { currentCommit, machineDescription, median, writeReportSection } from './support.ts';

const BACKLOGS = (process.env.BENCH_SINK_BACKLOGS ?? '1000,5000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as Dialect[];
const EXCHANGE = 'wagw.bench';
const QUEUE = 'wagw.bench.events';
const KINDS = ['webhook', 'rabbitmq'] as const;
type Kind = (typeof KINDS)[number];

interface Drain {
  perSecond: number;
  cpuMicroseconds: number;
}

/** Starts bench/receiver-process.ts, the endpoint that answers 204 at once, and gives its URL. */
async function startReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const child = fork(new URL('./receiver-process.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) =>
    child.on('message', (message: { port?: number }) => {
      if (message.port !== undefined) resolve(message.port);
    }),
  );
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: async () => {
      child.disconnect();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** Queues `count` incoming-message events for the account's one destination, as the receive path does. */
async function queueBacklog(gateway: Gateway, accountId: string, numberId: string, phone: E164, count: number): Promise<void> {
  for (let offset = 0; offset < count; offset += 500) {
    await gateway.committer.run(async (trx) => {
      for (let index = offset; index < Math.min(count, offset + 500); index++) {
        const message: Message = {
          id: newId('message'),
          accountId,
          numberId,
          direction: 'inbound',
          fromPhone: '+14155550100' as E164,
          fromLid: null,
          toPhone: phone,
          text: `backlog-${index}`,
          contentKind: 'text',
          mediaId: null,
          structured: null,
          status: 'received',
          engineMessageId: null,
          createdAt: new Date(),
        };
        await enqueueEvent(trx, CLAIMS_ONLY, accountId, incomingMessagePayload(message), message.createdAt);
      }
    });
  }
}

/** One drain of `count` events to one destination of `kind`, on a fresh gateway and database. */
async function drain(dialect: Dialect, kind: Kind, count: number, receiverUrl: string, brokerUrl: string): Promise<Drain> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
    WAGW_SECRET_KEY: '5e'.repeat(32),
    // The per-host politeness limit would measure itself, not the worker.
    WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND: '1000000',
  });
  const gateway = await createGateway(config, createLogger(config));
  try {
    const account = await gateway.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
    const number = await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: '+447700900001' });
    await gateway.webhooks.createWebhook(
      accountScope(account.id),
      kind === 'webhook'
        ? { url: receiverUrl, eventTypes: ['message'] }
        : { url: brokerUrl, eventTypes: ['message'], rabbitmq: { exchange: EXCHANGE, routingKey: 'bench.{event}' } },
    );
    await queueBacklog(gateway, account.id, number.id, number.phone, count);
    // Both kinds start from a checkpointed, analysed database, so neither drain pays for the queueing.
    if (dialect === 'postgres') await sql`analyze`.execute(gateway.store.db);
    else await sql`pragma wal_checkpoint(truncate)`.execute(gateway.store.db);

    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    gateway.deliveryWorker.start();
    // Delivered means the endpoint answered 2xx or the broker confirmed: the outbox is empty.
    while ((await countQueuedDeliveries(gateway.store.db, Date.now())).pending > 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    return { perSecond: count / seconds, cpuMicroseconds: (cpu.user + cpu.system) / count };
  } finally {
    await gateway.close();
    await database.drop();
  }
}

async function main(): Promise<void> {
  const broker = await ThrowawayRabbitmq.start();
  const receiver = await startReceiver();
  // A durable queue bound to every routing key, so each mandatory publish is routable; the
  // broker keeps the messages, and nothing consumes them during the drain.
  const admin = await connect(broker.url);
  const channel = await admin.createChannel();
  await channel.assertExchange(EXCHANGE, 'topic', { durable: true });
  await channel.assertQueue(QUEUE, { durable: true });
  await channel.bindQueue(QUEUE, EXCHANGE, 'bench.#');
  const rows: string[] = [];
  try {
    for (const dialect of DIALECTS) {
      for (const backlog of BACKLOGS) {
        const results: Record<Kind, Drain[]> = { webhook: [], rabbitmq: [] };
        for (let round = 0; round < ROUNDS; round++) {
          for (const kind of round % 2 === 0 ? KINDS : [...KINDS].reverse()) {
            const result = await drain(dialect, kind, backlog, receiver.url, broker.url);
            results[kind].push(result);
            await channel.purgeQueue(QUEUE);
            console.log(JSON.stringify({ dialect, backlog, round, kind, ...result, load: os.loadavg()[0] }));
          }
        }
        const perSecond = (kind: Kind) => median(results[kind].map((entry) => entry.perSecond));
        const cpu = (kind: Kind) => median(results[kind].map((entry) => entry.cpuMicroseconds));
        rows.push(
          `| ${dialect} | ${backlog.toLocaleString('en')} | ${Math.round(perSecond('webhook'))} | ${Math.round(perSecond('rabbitmq'))} | ` +
            `${Math.round(cpu('webhook'))} | ${Math.round(cpu('rabbitmq'))} | ${(cpu('rabbitmq') / cpu('webhook')).toFixed(2)} |`,
        );
      }
    }
  } finally {
    await channel.close().catch(() => undefined);
    await admin.close().catch(() => undefined);
    await receiver.close();
    await broker.close();
  }
  const report = [
    '## Sinks beside webhooks (`npm run bench:sinks`)',
    '',
    `${machineDescription()}, commit ${currentCommit()}, load ${os.loadavg()[0]!.toFixed(1)} at the end. A backlog queued with`,
    'the worker stopped, then drained; medians of the rounds, the kinds alternating. CPU is the gateway',
    "process's, per event; a webhook's endpoint and the broker run in processes of their own.",
    '',
    '| database | backlog | webhook events/s | RabbitMQ events/s | webhook CPU µs/event | RabbitMQ CPU µs/event | CPU ratio |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
  console.log(report);
  if (process.env.BENCH_NO_REPORT === undefined) writeReportSection('bench-sinks', report);
}

await main();
