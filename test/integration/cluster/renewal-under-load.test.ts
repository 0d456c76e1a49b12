import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { sleep, waitUntil } from '../../support/waiting.ts';

// Runs alone: it holds the event loop and the database's connections for seconds on purpose.

// Issue 37's regression: under a busy event loop or a long database queue a node stopped trusting
// its own leases and stopped every session ("leases could not be renewed in time"), and freshly
// linked numbers showed "disconnected". Each test makes the slowness itself, deterministically: a
// queue of transactions that outlasts the TTL, or an event loop held by a synchronous loop.

// The node answers a stall by asking the database, which must answer within a bound taken from
// the TTL (a tenth of it here): 10 s leaves a loaded machine a second for a SQLite renewal, where
// 5 s left half of one and a busy machine's renewal overran it (the node then rightly fenced).
const TTL_MS = 10_000;

/** Holds the event loop for `ms`, as a long synchronous task (or a starved process) does. */
function stallEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy: no timer, no I/O callback runs meanwhile.
  }
}

for (const dialect of dialects) {
  describe(`lease renewal under load (${dialect})`, () => {
    let test: TestGateway;
    const stopped: string[] = [];
    let numberIds: string[] = [];

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_LEASE_TTL_MS: String(TTL_MS) });
      // Every session the node stops, whatever the reason: none may stop in these tests.
      const supervisor = test.gateway.supervisor;
      const leaseLost = supervisor.leaseLost.bind(supervisor);
      supervisor.leaseLost = (numberId) => {
        stopped.push(numberId);
        return leaseLost(numberId);
      };
      const seeded = await seedAccount(test.gateway, { numbers: 2 });
      numberIds = await Promise.all(seeded.phones.map(async (phone) => (await test.gateway.numbers.findNumber(operatorScope(), phone)).id));
    });
    afterEach(() => {
      stopped.length = 0;
    });
    after(() => test.close());

    /** How many passes the lease watchdog has finished. */
    const trustChecks = () => test.gateway.scheduler.list().find((task) => task.name === 'lease-trust-check')!.runs;

    /** The leases the node holds now, by number. */
    const leases = () => numberIds.map((id) => test.gateway.keeper.leaseOf(id));

    /** Fails if the node stopped a session, gave a lease up, or said it could not renew. */
    function assertNothingLost(held: ReturnType<typeof leases>): void {
      assert.deepEqual(stopped, [], 'no session was stopped');
      assert.deepEqual(leases(), held, 'every lease is still held, under the same epoch');
      const alarms = test.logLines.filter((line) => /could not be renewed in time|ran out before it could renew/.test(line));
      assert.deepEqual(alarms, [], 'the node never gave up trust in its leases');
    }

    it('renews its leases ahead of a database queue that outlasts the TTL, and loses no number', async () => {
      const held = leases();
      assert.ok(held.every((lease) => lease !== undefined));
      // Requests enough to keep every connection busy for longer than a lease lasts: each holds
      // its connection for 50 ms, queued behind one another (SQLite has one connection,
      // PostgreSQL a pool).
      const database = test.gateway.config.database;
      const connections = database.dialect === 'postgres' ? database.poolSize : 1;
      const holdMs = 50;
      const count = Math.ceil(((TTL_MS * 1.2) / holdMs) * connections);
      const startedAt = performance.now();
      await Promise.all(
        Array.from({ length: count }, () =>
          test.gateway.store.db.transaction().execute(async (trx) => {
            await sql`select 1`.execute(trx);
            await sleep(holdMs);
          }),
        ),
      );
      const queuedMs = performance.now() - startedAt;
      assert.ok(queuedMs > TTL_MS, `the queue lasted ${Math.round(queuedMs)} ms, longer than a lease`);
      // A renewal sent after the queue drained: the node is past the jam with its leases.
      await test.gateway.keeper.renewNow();
      assertNothingLost(held);
    });

    it(
      dialect === 'sqlite'
        ? 'keeps its numbers through an event loop stalled past the TTL: on SQLite nobody else took them'
        : 'keeps its numbers through an event loop stalled past its trust window, since the database still holds them',
      async () => {
        const held = leases();
        assert.ok(held.every((lease) => lease !== undefined));
        const keeper = test.gateway.keeper;
        // Past the trust window, so that the watchdog wakes up distrusting; on PostgreSQL short of
        // the lease's end by the database's clock (another node could claim after it), on SQLite
        // past it too.
        const stallMs = dialect === 'sqlite' ? Math.round(TTL_MS * 1.2) : Math.round((keeper.trustMs + TTL_MS) / 2);
        await keeper.renewNow();
        const checks = trustChecks();
        stallEventLoop(stallMs);
        // The watchdog's first two passes after the stall have ended (the first wakes distrusting),
        // and so has a renewal.
        await waitUntil(() => trustChecks() >= checks + 2, "the watchdog's passes after the stall");
        await keeper.renewNow();
        assertNothingLost(held);
      },
    );
  });
}
