/**
 * npm run bench:cluster
 *
 * Several nodes on one PostgreSQL (docs/cluster.md):
 * - a send through a node that does not own from_phone (forwarded to the owner) against the same
 *   send made on the owner, alternating in one run, as a ratio;
 * - failover times: the chaos test's rounds (test/process/cluster-chaos.test.ts), each measured
 *   from the signal until every number is owned by a live node and connected on the shared
 *   sandbox network, p50 and max per kind of failure.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { openStore } from '../src/store/database.ts';
import { createTestDatabase } from '../test/support/databases.ts';
import { seedAccount } from '../test/support/gateway.ts';
import type { RoundResult } from '../test/process/cluster-chaos.test.ts';
import {
  BENCH_SECRET_KEY,
  currentCommit,
  machineDescription,
  percentile,
  runAutocannon,
  startGatewayProcess,
  writeReportSection,
  type LoadResult,
} from './support.ts';

const RUNS = Number(process.env.BENCH_CLUSTER_RUNS ?? 3);
const DURATION_SECONDS = 8;
const CONNECTIONS = 32;
const CHAOS_RUNS = Number(process.env.BENCH_CLUSTER_CHAOS_RUNS ?? 2);

const database = await createTestDatabase('postgres');
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-bench-cluster-'));
const seedConfig = loadConfig({
  DATABASE_URL: database.url,
  LOG_LEVEL: 'silent',
  WAGW_SECRET_KEY: BENCH_SECRET_KEY,
  WAGW_DATA_DIR: directory,
});
const seeding = await createGateway(seedConfig, createLogger(seedConfig));
const account = await seedAccount(seeding, { numbers: 1, plan: 'enterprise' });
await seeding.close();

const first = await startGatewayProcess({ databaseUrl: database.url, directory, env: { WAGW_NODE_NAME: 'first' } });
const second = await startGatewayProcess({ databaseUrl: database.url, directory, env: { WAGW_NODE_NAME: 'second' } });
const store = openStore(seedConfig.database);
const owner = await store.db
  .selectFrom('number_leases')
  .innerJoin('cluster_nodes', 'cluster_nodes.id', 'number_leases.node_id')
  .select('cluster_nodes.pid')
  .executeTakeFirstOrThrow();
await store.close();
const [ownerNode, otherNode] = owner.pid === first.pid ? [first, second] : [second, first];

const load = (port: number) =>
  runAutocannon({
    url: `http://127.0.0.1:${port}/send_message`,
    headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
    fromPhone: account.phones[0]!,
    text: 'cluster bench',
    connections: CONNECTIONS,
    durationSeconds: DURATION_SECONDS,
  });
await load(ownerNode.port); // warm-up of both paths
await load(otherNode.port);
const direct: LoadResult[] = [];
const forwarded: LoadResult[] = [];
for (let run = 0; run < RUNS; run++) {
  direct.push(await load(ownerNode.port));
  forwarded.push(await load(otherNode.port));
  console.log(JSON.stringify({ run, direct: direct.at(-1), forwarded: forwarded.at(-1) }));
}
await first.stop();
await second.stop();
await database.drop();

const rounds: RoundResult[] = [];
for (let run = 0; run < CHAOS_RUNS; run++) {
  const resultsFile = path.join(directory, `chaos-${run}.json`);
  const chaos = spawnSync(process.execPath, ['--import', 'tsx', '--test', 'test/process/cluster-chaos.test.ts'], {
    env: { ...process.env, WAGW_CHAOS_RESULTS: resultsFile },
    stdio: 'inherit',
  });
  if (chaos.status !== 0) throw new Error('the chaos rounds failed; see their output above');
  rounds.push(...(JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as { results: RoundResult[] }).results);
}
fs.rmSync(directory, { recursive: true, force: true });

const sortedBy = (values: number[]) => [...values].sort((a, b) => a - b);
const median = (values: number[]) => percentile(sortedBy(values), 0.5);
const ratio = median(forwarded.map((result) => result.requestsPerSecond)) / median(direct.map((result) => result.requestsPerSecond));
const failoverRow = (kind: RoundResult['kind'], label: string) => {
  const times = sortedBy(rounds.filter((round) => round.kind === kind).map((round) => round.recoveryMs));
  return `| ${label} | ${times.length} | ${(percentile(times, 0.5) / 1000).toFixed(2)} s | ${(times.at(-1)! / 1000).toFixed(2)} s |`;
};
const loadRow = (label: string, results: LoadResult[]) =>
  `| ${label} | ${Math.round(median(results.map((result) => result.requestsPerSecond))).toLocaleString('en')} | ${median(results.map((result) => result.p50Ms))} ms | ${median(results.map((result) => result.p99Ms))} ms | ${results.reduce((sum, result) => sum + result.non2xx + result.errors, 0)} |`;

writeReportSection(
  'bench:cluster',
  `## Cluster (\`npm run bench:cluster\`)

Measured ${new Date().toISOString().slice(0, 10)} at commit \`${currentCommit()}\` on ${machineDescription()}.

**A send through another node.** Two nodes on one PostgreSQL; the number is owned by one. The same
closed-loop load (${CONNECTIONS} connections, ${DURATION_SECONDS} s, durable sends) goes to the owner and to the other node, which
forwards every send to the owner over a signed internal call; runs alternate, ${RUNS} of each, medians shown.

| path | sends/s | p50 | p99 | non-2xx or errors |
|---|---|---|---|---|
${loadRow('on the owner', direct)}
${loadRow('through the other node', forwarded)}

Forwarded ÷ direct throughput, same run: **${ratio.toFixed(2)}**. Both nodes and the load share the machine's two
cores, so the forwarding node's own work (authentication, the internal call) is paid from the same CPU.

**Failover.** The chaos test's rounds (3 nodes, TTL 4 s, sends and incoming messages across all nodes), ${CHAOS_RUNS} runs:
from the signal until every number is owned by a live node and connected on the shared network.

| failure | rounds | p50 | max |
|---|---|---|---|
${failoverRow('kill', 'kill -9 (bound: TTL + 5 s = 9 s)')}
${failoverRow('stop', 'SIGSTOP past the TTL (bound: 9 s)')}
${failoverRow('term', 'SIGTERM (bound: 5 s)')}

After \`kill -9\` the numbers wait for the dead node's leases to run out, so failover is about the TTL
(less the time since the last renewal); with the default TTL of 15 s, expect up to about 15 s.
A clean stop releases the leases and notifies the other nodes, which claim at once.`,
);
process.exit(0);
