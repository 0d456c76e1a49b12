/**
 * npm run bench:lease-renewal
 *
 * What one node's lease renewal costs PostgreSQL at 100, 1,000 and 10,000 numbers shared by
 * three nodes, before and after ADR 0041, in one run on one server. Before: the statements the
 * lease keeper sent until then (a heartbeat, then one UPDATE of every lease row the node holds,
 * `expires_at` in the index beside `node_id`), run on a copy of the lease table in that shape.
 * After: renewNode, one UPDATE of the node's own row. Rounds alternate, so drift on a shared
 * machine hits both alike. Also read: the buffers one round touches (EXPLAIN ANALYZE BUFFERS),
 * the share of HOT updates and the dead tuples left, and, since a tick also reads how the
 * numbers are spread (readClusterView, a read of every lease row), that read's time.
 */
import { sql, type Kysely } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/domain/ids.ts';
import { newWhatsAppNumber } from '../src/domain/model.ts';
import type { E164 } from '../src/domain/phone.ts';
import { openStore } from '../src/store/database.ts';
import type { Database } from '../src/store/schema.ts';
import { insertAccount } from '../src/store/repositories/accounts.ts';
import { insertNumber } from '../src/store/repositories/numbers.ts';
import { ensureLeaseRows, registerNode, renewNode } from '../src/store/repositories/leases.ts';
import { readClusterView } from '../src/store/repositories/lease-handovers.ts';
import { createMigratedTestDatabase } from '../test/support/databases.ts';
import { currentCommit, machineDescription, median, percentile, writeReportSection } from './support.ts';

const SIZES = (process.env.BENCH_LEASE_SIZES ?? '100,1000,10000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_LEASE_ROUNDS ?? 60);
const NODES = 3;
const TTL_MS = 15_000;

interface Measured {
  numbers: number;
  beforeMs: number[];
  afterMs: number[];
  viewMs: number[];
  beforeBuffers: number;
  afterBuffers: number;
  before: TableStats;
  after: TableStats;
}

interface TableStats {
  updates: number;
  hotUpdates: number;
  deadTuples: number;
}

async function seed(db: Kysely<Database>, numbers: number): Promise<string[]> {
  const accountId = newId('account');
  const createdAt = new Date();
  await db.transaction().execute(async (trx) => {
    await insertAccount(trx, { id: accountId, name: 'Bench', plan: 'enterprise', customMonthlyLimit: null, createdAt });
    for (let index = 0; index < numbers; index++) {
      const phone = `+447700${String(index).padStart(6, '0')}` as E164;
      await insertNumber(
        trx,
        newWhatsAppNumber({ id: newId('number'), accountId, phone, engine: 'sandbox', status: 'connected' }, createdAt),
      );
    }
  });
  await ensureLeaseRows(db);
  const nodes: string[] = [];
  for (let index = 0; index < NODES; index++) {
    const id = newId('node');
    await registerNode(db, 'postgres', { id, name: `bench-${index}`, url: null, role: 'server', hostname: 'bench', pid: 0 }, TTL_MS);
    nodes.push(id);
  }
  // Round-robin, as a balanced cluster holds them.
  await sql`update number_leases set node_id = (array[${sql.join(nodes)}])[1 + (ranked.position % ${NODES})], epoch = 1
    from (select number_id, row_number() over (order by number_id) as position from number_leases) ranked
    where ranked.number_id = number_leases.number_id`.execute(db);
  // The previous shape, for the statements the keeper sent before.
  await sql`create table lease_rows_before as select number_id, node_id, epoch,
    (extract(epoch from clock_timestamp()) * 1000)::bigint + ${TTL_MS} as expires_at from number_leases`.execute(db);
  await sql`alter table lease_rows_before add primary key (number_id)`.execute(db);
  await sql`create index lease_rows_before_node_idx on lease_rows_before (node_id, expires_at)`.execute(db);
  await sql`vacuum analyze lease_rows_before`.execute(db);
  await sql`vacuum analyze cluster_nodes`.execute(db);
  await sql`vacuum analyze number_leases`.execute(db);
  return nodes;
}

const now = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** The keeper's renewal before ADR 0041: its heartbeat, then every lease row the node holds. */
async function renewBefore(db: Kysely<Database>, nodeId: string): Promise<void> {
  await sql`update cluster_nodes set heartbeat_at = ${now} where id = ${nodeId}`.execute(db);
  await sql`update lease_rows_before set expires_at = ${now} + ${TTL_MS} where node_id = ${nodeId} and expires_at > ${now}
    returning number_id, epoch`.execute(db);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Shared buffers (hit, read and dirtied) one execution of the statement touches. */
async function buffers(db: Kysely<Database>, statement: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (analyze, buffers, format json) ${statement}`.execute(db);
  const plan = (rows[0]!['QUERY PLAN'] as [{ Plan: Record<string, number> }])[0].Plan;
  return (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0) + (plan['Shared Dirtied Blocks'] ?? 0);
}

async function tableStats(db: Kysely<Database>, table: string): Promise<TableStats> {
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ n_tup_upd: string; n_tup_hot_upd: string; n_dead_tup: string }>`
    select n_tup_upd, n_tup_hot_upd, n_dead_tup from pg_stat_user_tables where relname = ${table}`.execute(db);
  const row = rows[0]!;
  return { updates: Number(row.n_tup_upd), hotUpdates: Number(row.n_tup_hot_upd), deadTuples: Number(row.n_dead_tup) };
}

function difference(after: TableStats, before: TableStats): TableStats {
  return {
    updates: after.updates - before.updates,
    hotUpdates: after.hotUpdates - before.hotUpdates,
    deadTuples: after.deadTuples,
  };
}

async function measure(numbers: number): Promise<Measured> {
  const database = await createMigratedTestDatabase('postgres');
  const store = openStore(loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' }).database);
  try {
    const nodes = await seed(store.db, numbers);
    const node = nodes[0]!;
    const startBefore = await tableStats(store.db, 'lease_rows_before');
    const startAfter = await tableStats(store.db, 'cluster_nodes');
    const result: Measured = {
      numbers,
      beforeMs: [],
      afterMs: [],
      viewMs: [],
      beforeBuffers: 0,
      afterBuffers: 0,
      before: startBefore,
      after: startAfter,
    };
    for (let round = 0; round < ROUNDS; round++) {
      result.beforeMs.push(await timed(() => renewBefore(store.db, node)));
      result.afterMs.push(await timed(() => renewNode(store.db, 'postgres', node, TTL_MS)));
      result.viewMs.push(await timed(() => readClusterView(store.db, 'postgres')));
    }
    result.before = difference(await tableStats(store.db, 'lease_rows_before'), startBefore);
    result.after = difference(await tableStats(store.db, 'cluster_nodes'), startAfter);
    result.beforeBuffers =
      (await buffers(store.db, sql`update cluster_nodes set heartbeat_at = ${now} where id = ${node}`)) +
      (await buffers(
        store.db,
        sql`update lease_rows_before set expires_at = ${now} + ${TTL_MS} where node_id = ${node} and expires_at > ${now} returning number_id, epoch`,
      ));
    result.afterBuffers = await buffers(
      store.db,
      sql`update cluster_nodes set heartbeat_at = ${now}, lease_expires_at = ${now} + ${TTL_MS} where id = ${node} and lease_expires_at > ${now}`,
    );
    return result;
  } finally {
    await store.close();
    await database.drop();
  }
}

const format = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${median(sorted).toFixed(2)} / ${percentile(sorted, 0.95).toFixed(2)}`;
};
const hotShare = (stats: TableStats) => (stats.updates === 0 ? '–' : `${Math.round((100 * stats.hotUpdates) / stats.updates)} %`);

const results: Measured[] = [];
for (const numbers of SIZES) {
  results.push(await measure(numbers));
  console.log(JSON.stringify({ ...results.at(-1), beforeMs: undefined, afterMs: undefined, viewMs: undefined }));
}

const rows = results.map((result) =>
  [
    result.numbers.toLocaleString('en'),
    Math.round(result.numbers / NODES).toLocaleString('en'),
    format(result.beforeMs),
    format(result.afterMs),
    `${(median(result.beforeMs) / median(result.afterMs)).toFixed(0)} ×`,
    `${result.beforeBuffers} / ${result.afterBuffers}`,
    `${hotShare(result.before)} / ${hotShare(result.after)}`,
    `${result.before.deadTuples.toLocaleString('en')} / ${result.after.deadTuples.toLocaleString('en')}`,
    format(result.viewMs),
  ].join(' | '),
);
const markdown = `## Lease renewal (\`npm run bench:lease-renewal\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.

| numbers | a node's leases | before: ms per renewal, median / p95 | after | median before ÷ after | buffers per renewal, before / after | HOT updates, before / after | dead tuples left, before / after | after: the tick's spread read (readClusterView), ms median / p95 |
|---|---|---|---|---|---|---|---|---|
${rows.map((row) => `| ${row} |`).join('\n')}

One PostgreSQL server, three nodes' worth of leases, ${ROUNDS} renewals of one node's leases each way, alternating.
*Before* is what the lease keeper sent until ADR 0041: a heartbeat, then an \`UPDATE\` of every lease row
the node holds, \`RETURNING\` them, on a table of the previous shape (\`expires_at\` indexed beside
\`node_id\`, so no update could be HOT). *After* is \`renewNode\`: one \`UPDATE\` of the node's own row.
Buffers are the shared blocks hit, read and dirtied by one renewal (\`EXPLAIN (ANALYZE, BUFFERS)\`);
dead tuples are those left in the table at the end (autovacuum may have run meanwhile). The last
column is the read a tick adds after ADR 0041 (how many leases each node holds, one grouped scan of
the lease table), which writes nothing.
`;
if (process.env.BENCH_NO_REPORT === undefined) writeReportSection('lease-renewal', markdown);
console.log(markdown);
process.exit(0);
