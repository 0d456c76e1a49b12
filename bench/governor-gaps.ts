/**
 * node --import tsx bench/governor-gaps.ts   (BENCH_GAPS_NUMBERS, _BACKLOG to scale it)
 *
 * The `standard` preset at work, on SQLite: one node owning BENCH_GAPS_NUMBERS sandbox numbers
 * (1,000), each given a backlog of BENCH_GAPS_BACKLOG sends (15, more than a minute's cap) at once through the HTTP API,
 * to three recipients in turn. Once every message has left, the release times (released_at,
 * written in the fenced release just before the engine is asked) are read back:
 * - a histogram of the gaps between consecutive sends of each number;
 * - every rule of the preset checked over every number's sends: the minimum gap, the gap per
 *   recipient, and the caps per minute, hour and day over every sliding window.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config.ts';
import { PRESETS } from '../src/domain/send-policy.ts';
import { startServer } from '../src/server.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { createTestDatabase } from '../test/support/databases.ts';
import { operatorScope } from '../src/domain/tenant-scope.ts';
import { currentCommit, machineDescription, percentile, writeReportSection } from './support.ts';

const NUMBERS = Number(process.env.BENCH_GAPS_NUMBERS ?? 1_000);
const BACKLOG = Number(process.env.BENCH_GAPS_BACKLOG ?? 15);
const RECIPIENTS_PER_NUMBER = 3;
const CONCURRENT_SENDS = 32;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const policy = PRESETS.standard!;

const database = await createTestDatabase('sqlite');
const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-governor-gaps-'));
const config = loadConfig({
  DATABASE_URL: database.url,
  PORT: '0',
  LOG_LEVEL: 'silent',
  WAGW_DATA_DIR: dataDirectory,
  WAGW_SECRET_KEY: '61'.repeat(32),
  WAGW_SEND_POLICY: 'standard',
});
const gateway = await createGateway(config, createLogger(config));
const seeded = await seedNumbers();
const server = await startServer(gateway);

const orders = seeded.phones.flatMap((phone, numberIndex) =>
  Array.from({ length: BACKLOG }, (_, index) => ({
    phone,
    to: `+1415${String(numberIndex).padStart(4, '0')}${String(index % RECIPIENTS_PER_NUMBER).padStart(3, '0')}`,
    text: `backlog ${numberIndex}-${index}`,
  })),
);
const answered = new Map<number, number>();
const queuedFrom = Date.now();
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENT_SENDS }, async () => {
    while (next < orders.length) {
      const order = orders[next++]!;
      const response = await fetch(`${server.address}/send_message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
        body: JSON.stringify({ from_phone: order.phone, to_phone: order.to, message: order.text }),
      });
      await response.arrayBuffer();
      answered.set(response.status, (answered.get(response.status) ?? 0) + 1);
    }
  }),
);
const queuedInMs = Date.now() - queuedFrom;
console.log(`answered ${orders.length} sends in ${queuedInMs} ms: ${JSON.stringify(Object.fromEntries(answered))}`);

const deadline = Date.now() + 10 * MINUTE;
for (;;) {
  const waiting = await gateway.store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'queued')
    .executeTakeFirstOrThrow();
  if (Number(waiting.count) === 0 || Date.now() > deadline) break;
  await sleep(1_000);
}
const drainedInMs = Date.now() - queuedFrom;
const rows = await gateway.store.db
  .selectFrom('messages')
  .select(['number_id', 'to_phone', 'released_at', 'status'])
  .where('direction', '=', 'outbound')
  .execute();
await server.stop();
await database.drop();
fs.rmSync(dataDirectory, { recursive: true, force: true });

const sendsOf = new Map<string, { at: number; to: string }[]>();
for (const row of rows)
  if (row.released_at !== null)
    sendsOf.set(row.number_id!, [...(sendsOf.get(row.number_id!) ?? []), { at: Number(row.released_at), to: row.to_phone }]);
const statuses = new Map<string, number>();
for (const row of rows) statuses.set(row.status, (statuses.get(row.status) ?? 0) + 1);

const gaps: number[] = [];
const broken = { gap: 0, recipientGap: 0, perMinute: 0, perHour: 0, perDay: 0 };
let busiestMinute = 0;
for (const sends of sendsOf.values()) {
  sends.sort((a, b) => a.at - b.at);
  for (let index = 1; index < sends.length; index++) {
    const gap = sends[index]!.at - sends[index - 1]!.at;
    gaps.push(gap);
    if (gap < policy.minGapMs) broken.gap++;
  }
  const lastTo = new Map<string, number>();
  for (const send of sends) {
    const previous = lastTo.get(send.to);
    if (previous !== undefined && send.at - previous < policy.perRecipientGapMs) broken.recipientGap++;
    lastTo.set(send.to, send.at);
  }
  // Every window ending at a send: the sends in (at - window, at].
  const most = (window: number) =>
    Math.max(...sends.map((send, index) => index - sends.findIndex((other) => other.at > send.at - window) + 1));
  const minute = most(MINUTE);
  busiestMinute = Math.max(busiestMinute, minute);
  if (policy.perMinute !== null && minute > policy.perMinute) broken.perMinute++;
  if (policy.perHour !== null && most(HOUR) > policy.perHour) broken.perHour++;
  if (policy.perDay !== null && most(DAY) > policy.perDay) broken.perDay++;
}
gaps.sort((a, b) => a - b);
const bucketMs = 1_000;
const buckets = new Map<number, number>();
for (const gap of gaps) buckets.set(Math.floor(gap / bucketMs), (buckets.get(Math.floor(gap / bucketMs)) ?? 0) + 1);
const widest = Math.max(...buckets.values());
const histogram = [...buckets]
  .sort((a, b) => a[0] - b[0])
  .map(
    ([bucket, count]) =>
      `| ${bucket}–${bucket + 1} s | ${count.toLocaleString('en')} | ${'█'.repeat(Math.max(1, Math.round((count / widest) * 40)))} |`,
  )
  .join('\n');

const report = `## Send governor: the \`standard\` preset over ${NUMBERS.toLocaleString('en')} backlogs (bench/governor-gaps.ts)

${machineDescription()}, commit ${currentCommit()}, SQLite, one node, load average ${os
  .loadavg()
  .map((load) => load.toFixed(1))
  .join(' / ')} at the end.

${NUMBERS.toLocaleString('en')} numbers under \`standard\` (gap ${policy.minGapMs / 1000}–${policy.maxGapMs / 1000} s, ${policy.perMinute} a minute, ${policy.perHour} an hour, ${policy.perDay} a day, ${policy.perRecipientGapMs / 1000} s per recipient), each sent a backlog of ${BACKLOG} at once to ${RECIPIENTS_PER_NUMBER} recipients in turn through the API (${orders.length.toLocaleString('en')} sends answered in ${(queuedInMs / 1000).toFixed(1)} s: ${[...answered].map(([status, count]) => `${count.toLocaleString('en')} × ${status}`).join(', ')}). All had left ${(drainedInMs / 1000).toFixed(0)} s after the first was asked for; they ended ${[...statuses].map(([status, count]) => `${count.toLocaleString('en')} ${status}`).join(', ')}.

| | |
|---|---|
| gaps between a number's consecutive sends | ${gaps.length.toLocaleString('en')} |
| gap min / p1 / p50 / p99 / max | ${gaps[0]} / ${percentile(gaps, 0.01)} / ${percentile(gaps, 0.5)} / ${percentile(gaps, 0.99)} / ${gaps.at(-1)} ms |
| gaps under ${policy.minGapMs / 1000} s | ${broken.gap} |
| sends to one recipient under ${policy.perRecipientGapMs / 1000} s apart | ${broken.recipientGap} |
| numbers over ${policy.perMinute} in any 60 s / ${policy.perHour} in any hour / ${policy.perDay} in any day | ${broken.perMinute} / ${broken.perHour} / ${broken.perDay} |
| most sends of one number in any 60 s | ${busiestMinute} |

| gap | sends | |
|---|---|---|
${histogram}
`;
console.log(report);
writeReportSection('governor-gaps', report);
process.exit(0);

/** One enterprise account with the numbers, each a phone of its own, and an API key. */
async function seedNumbers(): Promise<{ apiKey: string; phones: string[] }> {
  const account = await gateway.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
  const phones: string[] = [];
  for (let index = 0; index < NUMBERS; index++) {
    const number = await gateway.numbers.addNumber(operatorScope(), {
      accountId: account.id,
      phone: `+447700${String(index).padStart(6, '0')}`,
    });
    phones.push(number.phone);
  }
  const key = await gateway.apiKeys.createKey({ accountId: account.id, name: 'bench' });
  return { apiKey: key.plaintext, phones };
}
