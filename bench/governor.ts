/**
 * node --import tsx bench/governor.ts   (BENCH_GOVERNOR_MESSAGES, _NUMBERS, _DUE to scale it)
 *
 * The send governor's queue at rest and at work, on SQLite: a node owning BENCH_GOVERNOR_NUMBERS
 * sandbox numbers (10,000 by default) whose queues hold BENCH_GOVERNOR_MESSAGES scheduled
 * messages (1,000,000). Most are due tomorrow; BENCH_GOVERNOR_DUE of them (20,000) are due
 * spread over one minute starting 20 s after the node starts.
 * - Idle CPU: the node's CPU over 15 s before the first message is due, as a share of one core
 *   (the runner's one timer sleeps until the earliest due time; the lease keeper ticks as ever).
 * - Lateness: for each due message, its release (released_at) less its scheduled_for: p50, p99, max.
 * - CPU per release: the node's CPU from the first due time to the last release, per message.
 * BENCH_CPU_PROFILE_DIR writes a CPU profile of the node over that same window (first due time to
 * last release), so that the release path's cost can be read function by function.
 * The governor off against the build without it is bench:floor's (BENCH_FLOOR_COMPARE_ROOT); the
 * `standard` preset's gaps over 1,000 backlogs are bench/governor-gaps.ts's.
 */
import fs from 'node:fs';
import { sql } from 'kysely';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import { newWhatsAppNumber } from '../src/domain/model.ts';
import type { E164 } from '../src/domain/phone.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { insertAccount } from '../src/store/repositories/accounts.ts';
import { insertNumber } from '../src/store/repositories/numbers.ts';
import { createTestDatabase } from '../test/support/databases.ts';
import { currentCommit, machineDescription, percentile, startCpuProfile, writeReportSection } from './support.ts';

const MESSAGES = Number(process.env.BENCH_GOVERNOR_MESSAGES ?? 1_000_000);
const NUMBERS = Number(process.env.BENCH_GOVERNOR_NUMBERS ?? 10_000);
const DUE = Number(process.env.BENCH_GOVERNOR_DUE ?? 20_000);
const NUMBERS_PER_ACCOUNT = 10;
const DUE_AFTER_MS = 20_000;
const DUE_SPREAD_MS = 60_000;
const IDLE_WINDOW_MS = 15_000;
const INSERT_BATCH = 500;

const database = await createTestDatabase('sqlite');
const dataDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-governor-'));
const config = loadConfig({
  DATABASE_URL: database.url,
  LOG_LEVEL: 'silent',
  WAGW_DATA_DIR: dataDirectory,
  WAGW_SECRET_KEY: '60'.repeat(32),
});
const gateway = await createGateway(config, createLogger(config));
const numberIds = await seedNumbers();
const start = Date.now();
await seedQueue(numberIds);
console.log(`seeded ${MESSAGES} queued messages over ${NUMBERS} numbers in ${((Date.now() - start) / 1000).toFixed(1)} s`);
await gateway.runtime.startSessions();
// The due messages get their times only now, so that seeding, however long, never eats into them.
const firstDue = Date.now() + DUE_AFTER_MS;
await sql`update messages set scheduled_for = ${firstDue} + ((rowid * 7919) % ${DUE_SPREAD_MS}), created_at = ${firstDue} + ((rowid * 7919) % ${DUE_SPREAD_MS}), expires_at = ${firstDue + 2 * 86_400_000} where text = 'due'`.execute(
  gateway.store.db,
);
gateway.queueRunner.start();
const idleFrom = Math.max(Date.now() + 1_000, firstDue - IDLE_WINDOW_MS - 2_000);
if (Date.now() + IDLE_WINDOW_MS + 1_000 > firstDue) console.warn('seeding took too long: the idle window overlaps the first due messages');
await sleep(Math.max(0, idleFrom - Date.now()));
const cpuBefore = process.cpuUsage();
const idleStarted = performance.now();
await sleep(IDLE_WINDOW_MS);
const cpu = process.cpuUsage(cpuBefore);
const idleShare = (cpu.user + cpu.system) / 1_000 / (performance.now() - idleStarted);

// The node's CPU from the first due time until the last release, per message released: the
// measure that a busy shared machine moves least (lateness grows with whatever else runs).
await sleep(Math.max(0, firstDue - Date.now()));
const profile = await startCpuProfile();
const releaseCpuBefore = process.cpuUsage();
await sleep(Math.max(0, firstDue + DUE_SPREAD_MS - Date.now()));
const deadline = Date.now() + 120_000;
let rows: { scheduled: number; released: number | null }[] = [];
for (;;) {
  rows = (
    await gateway.store.db
      .selectFrom('messages')
      .select(['created_at as scheduled', 'released_at as released'])
      .where('text', '=', 'due')
      .execute()
  ).map((row) => ({ scheduled: Number(row.scheduled), released: row.released === null ? null : Number(row.released) }));
  if (rows.every((row) => row.released !== null) || Date.now() > deadline) break;
  await sleep(1_000);
}
const releaseCpu = process.cpuUsage(releaseCpuBefore);
await profile?.stop('governor-release');
const lateness = rows
  .filter((row) => row.released !== null)
  .map((row) => row.released! - row.scheduled)
  .sort((a, b) => a - b);
await gateway.queueRunner.stop();
await gateway.keeper.stop();
await gateway.close();
await database.drop();
fs.rmSync(dataDirectory, { recursive: true, force: true });

const report = `## Send governor queue (bench/governor.ts)

${machineDescription()}, commit ${currentCommit()}, SQLite, one node.

| | |
|---|---|
| scheduled messages | ${MESSAGES.toLocaleString('en')} over ${NUMBERS.toLocaleString('en')} numbers |
| idle CPU before the first is due (${IDLE_WINDOW_MS / 1000} s) | ${(idleShare * 100).toFixed(2)} % of a core |
| due messages released | ${lateness.length.toLocaleString('en')} of ${DUE.toLocaleString('en')}, spread over ${DUE_SPREAD_MS / 1000} s |
| lateness p50 / p99 / max | ${percentile(lateness, 0.5)} / ${percentile(lateness, 0.99)} / ${lateness.at(-1)} ms |
| the node's CPU per message released (while they were due) | ${((releaseCpu.user + releaseCpu.system) / 1_000 / Math.max(1, lateness.length)).toFixed(2)} ms |
| load average at the end | ${os
  .loadavg()
  .map((load) => load.toFixed(1))
  .join(' / ')} |
`;
console.log(report);
writeReportSection('governor', report);

async function seedNumbers(): Promise<string[]> {
  const ids: string[] = [];
  const createdAt = new Date(Date.now() - 30 * 86_400_000);
  for (let first = 0; first < NUMBERS / NUMBERS_PER_ACCOUNT; first += 100) {
    await gateway.store.db.transaction().execute(async (trx) => {
      for (let index = first; index < Math.min(NUMBERS / NUMBERS_PER_ACCOUNT, first + 100); index++) {
        const accountId = newId('account');
        await insertAccount(trx, { id: accountId, name: `Bench ${index}`, plan: 'enterprise', customMonthlyLimit: null, createdAt });
        for (let slot = 0; slot < NUMBERS_PER_ACCOUNT; slot++) {
          const id = newId('number');
          ids.push(id);
          const phone = `+447700${String(index * NUMBERS_PER_ACCOUNT + slot).padStart(6, '0')}` as E164;
          await insertNumber(
            trx,
            newWhatsAppNumber(
              {
                id,
                accountId,
                phone,
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
  return ids;
}

/**
 * The queue written directly, as the send path leaves it: `queued` rows with scheduled_for. A due
 * message's created_at is later set to its scheduled_for, so lateness reads from the row alone.
 */
async function seedQueue(ids: string[]): Promise<void> {
  const numbers = await gateway.store.db.selectFrom('whatsapp_numbers').select(['id', 'account_id', 'phone']).execute();
  const byId = new Map(numbers.map((number) => [number.id, number]));
  const tomorrow = Date.now() + 86_400_000;
  for (let first = 0; first < MESSAGES; first += INSERT_BATCH) {
    const values = [];
    for (let index = first; index < Math.min(MESSAGES, first + INSERT_BATCH); index++) {
      const number = byId.get(ids[index % ids.length]!)!;
      const due = index < DUE;
      const at = tomorrow + index;
      values.push({
        id: newId('message'),
        account_id: number.account_id,
        number_id: number.id,
        direction: 'outbound',
        from_phone: number.phone,
        from_lid: null,
        to_phone: `+1415555${String(index % 10_000).padStart(4, '0')}`,
        text: due ? 'due' : 'later',
        content_kind: 'text',
        media_id: null,
        structured: null,
        status: 'queued',
        engine_message_id: null,
        error_code: null,
        created_at: Date.now(),
        updated_at: Date.now(),
        scheduled_for: at,
        expires_at: at + 86_400_000,
        wait_reason: 'scheduled',
        first_contact: 0,
      });
    }
    await gateway.store.db.insertInto('messages').values(values).execute();
  }
}
