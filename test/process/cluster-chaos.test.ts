import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { accountScope } from '../../src/domain/tenant-scope.ts';
import type { JournalEntry } from '../../src/engines/sandbox/sandbox-network.ts';
import type { RemoteSandboxNetwork } from '../../src/engines/sandbox/remote-sandbox-network.ts';
import { TEST_SECRET_KEY_HEX, testNetworkClient } from '../support/shared-network.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';
import { seedAccount } from '../support/gateway.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { webhookEnv } from '../support/delivery-support.ts';
import { sleep, waitFor } from './raw-http.ts';
import { freePort, killAllServerProcesses, openDatabase, startServerProcess, withGateway, type ServerProcess } from './server-process.ts';
import { ChaosLoad, type TimedAnswer } from './cluster-chaos-load.ts';
import { ignoreCleanupFailure } from '../support/ignore.ts';
import { liveConnections, networkProcess, sentTextCounts, type NetworkProcess } from './network-process.ts';

// Short enough for a bounded CI run, long enough that a busy CI machine does not starve renewals.
const TTL_MS = 4_000;
const NUMBERS = 6;
const ROUNDS: readonly ('kill' | 'stop' | 'term')[] = ['kill', 'stop', 'term', 'kill', 'stop', 'term'];
/** The bound: every number owned and connected again within TTL + 5 s (a clean stop: 5 s). */
const RECOVERY_MS = { kill: TTL_MS + 5_000, stop: TTL_MS + 5_000, term: 5_000 };
/** The shared network's outage in its round, and the bound on every number connecting again after it (docs/cluster.md: 2 s). */
const NETWORK_OUTAGE_MS = 10_000;
const NETWORK_RECOVERY_MS = 5_000;
/** How long a request waits for a number's new owner; a send to a frozen owner is answered within it and a second (the bound). */
const OWNER_WAIT_MS = 2_000;
const IN_FLIGHT_ANSWER_MS = OWNER_WAIT_MS + 1_000;
/** The bound on every number being owned and connected again after PostgreSQL restarts under the nodes. */
const POSTGRES_RECOVERY_MS = 5_000;

export interface RoundResult {
  kind: 'kill' | 'stop' | 'term' | 'network' | 'postgres';
  /** From the signal to every number owned by a live node and connected on the network. */
  recoveryMs: number;
  /** SIGSTOP rounds: the slowest first answer to a keyed send forwarded to the frozen owner. */
  slowestInFlightAnswerMs?: number;
}

/** Written by the test for bench/cluster-failover.ts to report; absent unless asked for. */
const RESULTS_FILE = process.env.WAGW_CHAOS_RESULTS;

describe('three nodes on one PostgreSQL with a shared sandbox network, under kill -9, SIGSTOP and SIGTERM (postgres)', {
  timeout: 420_000,
}, () => {
  let database: TestDatabase;
  let privatePostgres: PrivatePostgres | undefined;
  let receiver: WebhookReceiver;
  let network: ChildProcess;
  let networkClient: RemoteSandboxNetwork;
  let networkPort: number;
  const nodes: ServerProcess[] = [];
  let load: ChaosLoad | undefined;

  let networkRuns: NetworkProcess;
  const startNetwork = () => networkRuns.start();
  const wholeJournal = (): JournalEntry[] => networkRuns.journal();

  before(async () => {
    // The PostgreSQL round restarts the server: a server of this test's own, so that the other
    // test files running beside it keep theirs.
    privatePostgres = await startPrivatePostgres();
    database =
      privatePostgres === undefined ? await createTestDatabase('postgres') : { url: privatePostgres.url, drop: privatePostgres.stop };
    receiver = await WebhookReceiver.start();
    networkPort = await freePort();
    networkRuns = networkProcess(networkPort);
    network = await startNetwork();
    networkClient = testNetworkClient(networkPort);
  });

  after(async () => {
    // A failed assertion leaves the load running; its loops must end, or the file never exits.
    await load?.stop().catch(ignoreCleanupFailure);
    await killAllServerProcesses();
    networkClient?.close();
    network?.kill('SIGKILL');
    await receiver?.close();
    await database?.drop();
  });

  it('sends and receives every message exactly once, never runs a number twice, and recovers within the bounds', async () => {
    const env = webhookEnv({
      WAGW_SECRET_KEY: TEST_SECRET_KEY_HEX,
      WAGW_SANDBOX_NETWORK: `tcp://127.0.0.1:${networkPort}`,
      WAGW_LEASE_TTL_MS: String(TTL_MS),
      WAGW_OWNER_WAIT_MS: String(OWNER_WAIT_MS),
      WAGW_INTERRUPTED_SEND_AFTER_MS: '5000',
      WAGW_SANDBOX_RECEIVES_PER_MINUTE: '1000000',
      WAGW_WEBHOOK_RETRY_SCHEDULE: '0.2,0.5,1,1,1,1,1,1,1,1',
    });
    const start = (index: number) => startServerProcess(database.url, { ...env, WAGW_NODE_NAME: `node-${index}` });
    // The three nodes start at once on the empty database: each serves, none exits, and the
    // operator is made once (issue 26, item 2).
    const starts = await Promise.allSettled([0, 1, 2].map(start));
    assert.deepEqual(
      starts.flatMap((started) => (started.status === 'rejected' ? [String(started.reason)] : [])),
      [],
      'every node started at once on the empty database serves',
    );
    nodes.push(...starts.map((started) => (started as PromiseFulfilledResult<ServerProcess>).value));
    const store = openDatabase(database.url);
    try {
      // A node makes the operator just after it starts listening: wait for the first, then a moment for any other.
      const operatorsNow = () => store.db.selectFrom('users').select('email').where('is_operator', '=', 1).execute();
      await waitFor(async () => (await operatorsNow()).length > 0, 10_000, 'the operator to be made');
      await sleep(1_000);
      const operators = await operatorsNow();
      assert.deepEqual(
        operators.map((operator) => operator.email),
        ['admin@wagw.local'],
        'one operator, made once',
      );
      const seeded = await withGateway(
        database.url,
        async (gateway) => {
          const account = await seedAccount(gateway, { numbers: NUMBERS, plan: 'enterprise' });
          await gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url(), eventTypes: ['message'] });
          return account;
        },
        { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${receiver.port}`, WAGW_SECRET_KEY: TEST_SECRET_KEY_HEX },
      );
      const nodeIdOf = async (server: ServerProcess) => {
        const row = await store.db
          .selectFrom('cluster_nodes')
          .select('id')
          .where('pid', '=', server.pid)
          .orderBy('started_at', 'desc')
          .executeTakeFirstOrThrow();
        return row.id;
      };
      /** Every number leased by a live node other than `excluded`, and connected on the network from that node. */
      const recovered = async (excluded: string | undefined) => {
        // While PostgreSQL restarts, the test's own reads fail like the nodes' do: not recovered yet.
        const leases = await leasedPhones().catch(() => []);
        if (leases.length < NUMBERS) return false;
        const live = liveConnections(await networkClient.journal());
        const done = leases.every(
          (lease) => lease.node_id !== null && lease.node_id !== excluded && live.get(lease.phone) === lease.node_id,
        );
        if (!done) lastSeen = `leases ${JSON.stringify(leases)}, live connections ${JSON.stringify(Object.fromEntries(live))}`;
        return done;
      };
      /** What the last look found, for a round that took longer than its bound. */
      let lastSeen = '';
      const leasedPhones = () =>
        store.db
          .selectFrom('number_leases')
          .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'number_leases.number_id')
          .select(['phone', 'node_id'])
          .execute();
      const waitRecovered = async (excluded: string | undefined, boundMs: number, from: number) => {
        while (!(await recovered(excluded))) {
          if (Date.now() - from > boundMs + 30_000) {
            const leases = await store.db
              .selectFrom('number_leases')
              .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'number_leases.number_id')
              .select(['phone', 'node_id', 'epoch', 'wanted_by'])
              .execute();
            const clusterNodes = await store.db
              .selectFrom('cluster_nodes')
              .select(['id', 'pid', 'role', 'heartbeat_at', 'lease_expires_at', 'stopped_at'])
              .execute();
            const live = Object.fromEntries(liveConnections(await networkClient.journal()));
            const outputs = nodes
              .map((node) => `--- pid ${node.pid} ${JSON.stringify(node.exitStatus())}\n${node.output().slice(-3_000)}`)
              .join('\n');
            assert.fail(
              `numbers were not all owned and connected again ${boundMs + 30_000} ms after the signal (excluded ${excluded}, now ${Date.now()}):\n` +
                `leases ${JSON.stringify(leases)}\nnodes ${JSON.stringify(clusterNodes)}\nlive connections ${JSON.stringify(live)}\n${outputs}`,
            );
          }
          await sleep(50);
        }
        const tookMs = Date.now() - from;
        if (tookMs > boundMs) process.stderr.write(`recovery took ${tookMs} ms; what was seen just before: ${lastSeen}\n`);
        return tookMs;
      };
      await waitRecovered(undefined, 30_000, Date.now());

      load = new ChaosLoad(
        () => nodes.filter((node) => node.exitStatus() === undefined).map((node) => node.port),
        seeded.apiKey,
        seeded.phones,
      );
      load.start();
      // The load runs through all three of the nodes that started together.
      const startedPorts = nodes.map((node) => node.port);
      for (const from = Date.now(); startedPorts.some((port) => !load!.answeredBy.has(port)); await sleep(100)) {
        if (Date.now() - from > 30_000)
          assert.fail(`not every node served the load: ${JSON.stringify([...load.answeredBy])} of ${startedPorts.join(', ')}`);
      }
      const results: RoundResult[] = [];
      const stopWindows: { node: string; from: number; to: number }[] = [];
      for (const [round, kind] of ROUNDS.entries()) {
        await sleep(1_500);
        const nodeIds = await Promise.all(nodes.map(nodeIdOf));
        const leases = await leasedPhones();
        const phonesOf = (nodeId: string) => leases.filter((lease) => lease.node_id === nodeId).map((lease) => lease.phone);
        // A SIGSTOP freezes a node that owns numbers, so that sends to them are in flight to it.
        const candidates = nodes.flatMap((_, at) => (kind !== 'stop' || phonesOf(nodeIds[at]!).length > 0 ? [at] : []));
        const index = candidates[randomInt(candidates.length)]!;
        const victim = nodes[index]!;
        const victimId = nodeIds[index]!;
        const inFlight: Promise<TimedAnswer>[] = [];
        let sendingToFrozenOwner: Promise<void> = Promise.resolve();
        if (kind === 'stop') {
          // Keyed sends from the victim's numbers through the other nodes, which forward them to
          // it: one pair just before it freezes, then a pair every half second until its leases
          // could have run out. Each is timed to its first answer (issue 26, item 3).
          const victimPhones = phonesOf(victimId);
          const otherPorts = nodes.filter((node) => node !== victim).map((node) => node.port);
          const sendThroughOthers = () => {
            for (const port of otherPorts) inFlight.push(load!.timedSend(port, victimPhones[randomInt(victimPhones.length)]!));
          };
          sendThroughOthers();
          sendingToFrozenOwner = (async () => {
            for (let pair = 0; pair < 6; pair++) {
              await sleep(500);
              sendThroughOthers();
            }
          })();
        }
        const signalledAt = Date.now();
        if (kind === 'kill') {
          victim.signalGroup('SIGKILL');
          await victim.exited;
        } else if (kind === 'term') {
          victim.signalGroup('SIGTERM');
          const exit = await victim.exited;
          assert.equal(exit.code, 0, `a SIGTERM stops cleanly:\n${victim.output()}`);
        } else {
          victim.signalGroup('SIGSTOP');
        }
        const recoveryMs = await waitRecovered(victimId, RECOVERY_MS[kind], signalledAt);
        await sendingToFrozenOwner;
        const answers = await Promise.all(inFlight);
        const slowest = answers.reduce<TimedAnswer | undefined>(
          (worst, answer) => (worst === undefined || answer.ms > worst.ms ? answer : worst),
          undefined,
        );
        results.push({ kind, recoveryMs, ...(slowest !== undefined && { slowestInFlightAnswerMs: slowest.ms }) });
        assert.ok(
          recoveryMs <= RECOVERY_MS[kind],
          `round ${round} (${kind}): recovered in ${recoveryMs} ms, more than ${RECOVERY_MS[kind]} ms; the victim's output:\n${victim.output().slice(-4_000)}`,
        );
        for (const answer of answers) {
          assert.ok(
            answer.ms <= IN_FLIGHT_ANSWER_MS,
            `round ${round}: a send forwarded to the frozen owner was answered after ${answer.ms} ms, more than ${IN_FLIGHT_ANSWER_MS} ms: ${JSON.stringify(answers)}`,
          );
        }
        if (kind === 'stop') {
          await sleep(Math.max(0, TTL_MS + 1_000 - (Date.now() - signalledAt)));
          victim.signalGroup('SIGCONT');
          stopWindows.push({ node: victimId, from: signalledAt, to: Date.now() + 5_000 });
          // The woken node stands down: none of its old numbers are still its own, and it serves again.
          await sleep(1_000);
          assert.equal(victim.exitStatus(), undefined, 'the woken node keeps running');
        } else {
          nodes[index] = await start(index);
        }
      }
      // The shared network goes away for 10 s and comes back: each number connects again once,
      // in its one reconnect loop, and none is left in conflict (issue 26, item 1). A SIGTERM,
      // so that its journal file is complete; to the nodes it is a closed socket all the same.
      await sleep(1_500);
      network.kill('SIGTERM');
      await new Promise((resolve) => network.once('exit', resolve));
      await sleep(NETWORK_OUTAGE_MS);
      network = await startNetwork();
      results.push({ kind: 'network', recoveryMs: await waitRecovered(undefined, NETWORK_RECOVERY_MS, Date.now()) });
      assert.ok(
        results.at(-1)!.recoveryMs <= NETWORK_RECOVERY_MS,
        `the network round recovered in ${results.at(-1)!.recoveryMs} ms, more than ${NETWORK_RECOVERY_MS} ms`,
      );
      await sleep(3_000);

      // PostgreSQL restarts under the nodes while numbers send to each other: a receiving node
      // that cannot store a message tells the network, which hands it over again, so every
      // number-to-number send answered 200 still arrives (issue 26, item 4). The server is this
      // test's own (startPrivatePostgres); without PostgreSQL's programs the round is left out.
      const postgres = privatePostgres;
      if (postgres !== undefined) {
        await sleep(1_500);
        const numberToNumberBefore = load.numberToNumber.length;
        const restartedAt = Date.now();
        await restartPostgres(postgres);
        results.push({ kind: 'postgres', recoveryMs: await waitRecovered(undefined, POSTGRES_RECOVERY_MS, restartedAt) });
        assert.ok(
          results.at(-1)!.recoveryMs <= POSTGRES_RECOVERY_MS,
          `the PostgreSQL round recovered in ${results.at(-1)!.recoveryMs} ms, more than ${POSTGRES_RECOVERY_MS} ms`,
        );
        await sleep(3_000);
        assert.ok(load.numberToNumber.length > numberToNumberBefore, 'numbers sent to each other after the restart');
      }

      await load.stop();
      // Everything the load was answered 200 for has reached the network and the webhook.
      const journal = wholeJournal();
      const sentTexts = sentTextCounts(journal);
      assert.ok(load.sent.length > 20, `the load made sends (${load.sent.length})`);
      for (const text of load.sent) assert.equal(sentTexts.get(text), 1, `"${text}" was answered 200 and reached the network exactly once`);
      for (const [text, count] of sentTexts) assert.equal(count, 1, `"${text}" reached the network ${count} times`);

      assert.ok(load.received.length > 20, `the load made incoming messages (${load.received.length})`);
      const deadline = Date.now() + 60_000;
      const deliveredIds = () => {
        const byMessage = new Map<string, Set<string>>();
        for (const request of receiver.requests) {
          const payload = JSON.parse(request.body) as { message_id: string };
          byMessage.set(payload.message_id, (byMessage.get(payload.message_id) ?? new Set()).add(String(request.headers['webhook-id'])));
        }
        return byMessage;
      };
      while (load.received.some((id) => !deliveredIds().has(id)) && Date.now() < deadline) await sleep(100);
      const delivered = deliveredIds();
      for (const id of load.received) {
        if (delivered.has(id)) continue;
        const row = await store.db
          .selectFrom('messages')
          .select(['status', 'engine_message_id', 'to_phone', 'created_at'])
          .where('id', '=', id)
          .executeTakeFirst();
        const deliveries = await store.db
          .selectFrom('webhook_deliveries')
          .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
          .selectAll('webhook_deliveries')
          .where('webhook_events.payload', 'like', `%${id}%`)
          .execute();
        assert.fail(
          `incoming ${id} was answered 200 but never reached the webhook: row ${JSON.stringify(row)}, deliveries ${JSON.stringify(deliveries)}`,
        );
      }
      for (const [id, webhookIds] of delivered)
        assert.equal(webhookIds.size, 1, `incoming ${id} reached the webhook as ${webhookIds.size} different events`);

      // Every send between the gateway's numbers answered 200 was stored once as incoming on the
      // receiving number, and reached the webhook.
      assert.ok(load.numberToNumber.length > 20, `numbers sent to each other (${load.numberToNumber.length})`);
      const webhookTexts = () =>
        new Set(
          receiver.requests
            .map((request) => JSON.parse(request.body) as { message: string; to_phone: string })
            .map((payload) => `${payload.to_phone} ${payload.message}`),
        );
      const arrivedAt = (send: { text: string; toPhone: string }) => `${send.toPhone} ${send.text}`;
      while (load.numberToNumber.some((send) => !webhookTexts().has(arrivedAt(send))) && Date.now() < deadline) await sleep(100);
      const stored = await store.db
        .selectFrom('messages')
        .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'messages.number_id')
        .select(['phone', 'text'])
        .where('direction', '=', 'inbound')
        .where('text', 'like', 'n2n-%')
        .execute();
      const storedCounts = new Map<string, number>();
      for (const row of stored) storedCounts.set(`${row.phone} ${row.text}`, (storedCounts.get(`${row.phone} ${row.text}`) ?? 0) + 1);
      const webhooked = webhookTexts();
      for (const send of load.numberToNumber) {
        assert.equal(
          storedCounts.get(arrivedAt(send)),
          1,
          `"${send.text}" to ${send.toPhone} was answered 200 and stored once as incoming on the receiving number`,
        );
        assert.ok(
          webhooked.has(arrivedAt(send)),
          `"${send.text}" to ${send.toPhone} was answered 200 but its incoming message never reached the webhook`,
        );
      }

      // Two live connections for one number happen only as WhatsApp's own replacement after a SIGSTOP.
      const replacements = journal.filter((entry) => entry.kind === 'replace');
      for (const replacement of replacements) {
        const window = stopWindows.find(
          (stop) => stop.node === replacement.node && replacement.at >= stop.from && replacement.at <= stop.to,
        );
        assert.ok(window !== undefined, `${replacement.phone} had two live connections outside a SIGSTOP round (node ${replacement.node})`);
      }
      for (const window of stopWindows) {
        const phones = replacements
          .filter((entry) => entry.node === window.node && entry.at >= window.from && entry.at <= window.to)
          .map((entry) => entry.phone);
        assert.equal(new Set(phones).size, phones.length, 'at most one replacement per number per SIGSTOP');
      }
      // No stale write was accepted: no session status was ever overwritten to conflict.
      const statuses = await store.db.selectFrom('whatsapp_numbers').select(['phone', 'status']).execute();
      for (const row of statuses) assert.equal(row.status, 'connected', `${row.phone} ended ${row.status}`);
      if (RESULTS_FILE !== undefined)
        fs.writeFileSync(
          RESULTS_FILE,
          JSON.stringify({ results, sends: load.sent.length, receives: load.received.length, replacements: replacements.length }),
        );
    } finally {
      await store.close();
    }
  });
});

/**
 * A fast restart (open connections are ended, nothing is lost), as the cluster's owner; it
 * returns once the server accepts connections again. PostgreSQL refuses to run as root, so as
 * root the server belongs to the postgres user (scripts/postgres.sh).
 */
async function restartPostgres({ bin, directory }: PrivatePostgres): Promise<void> {
  const pgCtl = [
    path.join(bin, 'pg_ctl'),
    'restart',
    '-D',
    path.join(directory, 'data'),
    '-m',
    'fast',
    '-w',
    '-l',
    path.join(directory, 'server.log'),
  ];
  const [command, ...args] = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...pgCtl] : pgCtl;
  await promisify(execFile)(command!, args, { timeout: 30_000 });
}
