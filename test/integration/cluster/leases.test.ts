import assert from 'node:assert/strict';
import { newWhatsAppNumber } from '../../../src/domain/model.ts';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { LeaseKeeper } from '../../../src/cluster/lease-keeper.ts';
import type { SessionHost } from '../../../src/messaging/session-leases.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { createDatabaseAuthState } from '../../../src/engines/baileys/auth-state-store.ts';
import { SecretBox } from '../../../src/secrets/secret-box.ts';
import { StaleLeaseError } from '../../../src/store/repositories/leases.ts';
import { dialects } from '../../support/databases.ts';
import { newId } from '../../../src/domain/ids.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import { until } from '../../support/leases.ts';
import { seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';

// Runs alone: its lease TTLs leave margins of about a second, which other files' work on the same event loop could eat.

const silent = pino({ level: 'silent' });
// A node fences itself when a renewal has not landed within four fifths of the TTL. At 1.5 s that
// margin (1.2 s) was eaten on a fresh CI machine, where n8n's install in the background (3 GB of
// files and a C++ build) held SQLite's commits: all four tests that need this node to keep its
// leases failed together. No test here waits out a TTL, so a longer one costs no time.
const TTL_MS = 4_000;
/** The stalling keeper's TTL: its stop must come before its lease ends, by more than a loaded machine's timer delays. */
const STALLING_TTL_MS = 6_000;

/** Another node on the same database: a lease keeper whose sessions are only recorded. */
function otherNode(test: TestGateway, name: string) {
  const running = new Set<string>();
  const keeper = new LeaseKeeper(
    test.gateway.store,
    { ttlMs: TTL_MS, maxSessions: null, nodeName: name, nodeUrl: null, drainMs: 1_000, sessionStartsPerSecond: 4 },
    silent,
  );
  const host: SessionHost = {
    leasesGained: (leases) => {
      for (const lease of leases) running.add(lease.numberId);
    },
    leaseLost: async (numberId) => void running.delete(numberId),
    drain: async () => undefined,
    pendingStarts: () => 0,
  };
  keeper.attach(host);
  return { keeper, running };
}

for (const dialect of dialects) {
  describe(`number leases (${dialect})`, () => {
    let test: TestGateway;
    const others: LeaseKeeper[] = [];

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_LEASE_TTL_MS: String(TTL_MS) });
    });
    afterEach(async () => {
      for (const keeper of others.splice(0)) await keeper.stop();
    });
    after(() => test.close());

    it('gives each number one owner, and a new number to a running node at once', async () => {
      const seeded = await seedAccount(test.gateway, { numbers: 3 });
      for (const phone of seeded.phones) {
        const number = await test.gateway.numbers.findNumber(operatorScope(), phone);
        const lease = test.gateway.keeper.leaseOf(number.id);
        assert.ok(lease !== undefined, `${phone} is held by this node as soon as it is added`);
        assert.equal(lease.nodeId, test.gateway.keeper.nodeId);
        assert.equal(test.gateway.supervisor.sessionStatus(number), 'connected', 'and its sandbox session is connected');
      }
      const rows = await test.gateway.store.db.selectFrom('number_leases').select(['node_id']).execute();
      assert.ok(rows.every((row) => row.node_id === test.gateway.keeper.nodeId));
    });

    it('refuses every owner-only write made under a stale epoch, and the stale node stands down', async () => {
      const seeded = await seedAccount(test.gateway, { numbers: 1 });
      const number = await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      const stale = test.gateway.keeper.leaseOf(number.id)!;
      // Another node takes the number over, as after this one was paused past its lease.
      const other = otherNode(test, 'other');
      others.push(other.keeper);
      const expireUnlessOtherHolds = () =>
        test.gateway.store.db
          .updateTable('number_leases')
          .set({ node_id: null })
          .where('number_id', '=', number.id)
          .where('node_id', '!=', other.keeper.nodeId)
          .execute();
      await expireUnlessOtherHolds();
      await other.keeper.startPinned([number.id]);
      // This node's own tick may reclaim the expired lease first (it is live, only its lease
      // lapsed); then it is expired again until the other node's tick wins it.
      await until(async () => {
        if (other.keeper.leaseOf(number.id) !== undefined) return true;
        await expireUnlessOtherHolds();
        return false;
      }, 'the other node to take the number over');
      const current = other.keeper.leaseOf(number.id);
      assert.ok(current !== undefined && current.epoch > stale.epoch, 'the epoch grows on the change of owner');

      // Session status: refused, and the number keeps the status the new owner's world has.
      await test.gateway.supervisor.recordSessionStatus({ lease: stale, phone: number.phone, status: 'conflict', reason: 'stale' });
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).status, 'connected');
      await until(() => test.gateway.keeper.leaseOf(number.id) === undefined, 'the refused node to stop believing it owns the number');
      assert.match(await test.gateway.metrics.render(), /wagw_stale_lease_writes_refused_total [1-9]/);

      // Auth state: Signal keys and creds cannot be overwritten by the stale session.
      const secretBox = new SecretBox(test.gateway.config.secretKey!);
      const auth = await createDatabaseAuthState(test.gateway.store, secretBox, stale, silent);
      await assert.rejects(async () => auth.state.keys.set({ session: { peer: new Uint8Array([1, 2, 3]) } }), StaleLeaseError);
      await assert.rejects(auth.saveCreds(), StaleLeaseError);
      const keys = await test.gateway.store.db
        .selectFrom('baileys_auth_keys')
        .select('key_id')
        .where('number_id', '=', number.id)
        .execute();
      assert.equal(keys.length, 0);
      // The new owner's writes go through.
      const fresh = await createDatabaseAuthState(test.gateway.store, secretBox, current, silent);
      await fresh.state.keys.set({ session: { peer: new Uint8Array([4]) } });
      assert.equal(
        (await test.gateway.store.db.selectFrom('baileys_auth_keys').select('key_id').where('number_id', '=', number.id).execute()).length,
        1,
      );

      // A receipt heard under the stale lease is refused under it, yet it is WhatsApp's word about
      // the message: it still moves the row forward, never back (issue 37).
      const now = Date.now();
      await test.gateway.store.db
        .insertInto('messages')
        .values({
          id: `msg_stale_${dialect}`,
          account_id: seeded.accountId,
          number_id: number.id,
          direction: 'outbound',
          from_phone: number.phone,
          from_lid: null,
          to_phone: '+14155550100',
          text: 'hi',
          content_kind: 'text',
          status: 'sent',
          engine_message_id: 'sbx_stale',
          error_code: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await test.gateway.receiver.recordReceipt({
        lease: stale,
        phone: number.phone,
        engineMessageId: 'sbx_stale',
        status: 'delivered',
        errorCode: null,
        at: new Date(),
      });
      const row = await test.gateway.store.db
        .selectFrom('messages')
        .select('status')
        .where('id', '=', `msg_stale_${dialect}`)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'delivered', 'a receipt reaches its message whichever session heard it');
      await test.gateway.receiver.recordReceipt({
        lease: current,
        phone: number.phone,
        engineMessageId: 'sbx_stale',
        status: 'read',
        errorCode: null,
        at: new Date(),
      });
      const after = await test.gateway.store.db
        .selectFrom('messages')
        .select('status')
        .where('id', '=', `msg_stale_${dialect}`)
        .executeTakeFirstOrThrow();
      assert.equal(after.status, 'read', 'a receipt under the current lease is applied');
    });

    it('shares the numbers fairly when a node joins, which asks for them at its pace', async () => {
      await seedAccount(test.gateway, { numbers: 4 });
      const other = otherNode(test, 'joiner');
      others.push(other.keeper);
      await other.keeper.start();
      const total = Number(
        (
          await test.gateway.store.db
            .selectFrom('number_leases')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      await until(() => other.keeper.heldCount() >= Math.floor(total / 2), 'the joiner to reach its fair share');
      await until(() => test.gateway.keeper.heldCount() <= Math.ceil(total / 2), 'this node to give up its surplus');
      const handovers = await test.gateway.store.db
        .selectFrom('lease_changes')
        .select(['reason'])
        .where('reason', '=', 'handed_over')
        .execute();
      assert.ok(handovers.length >= 1, 'handovers are recorded');
      assert.equal(other.running.size, other.keeper.heldCount(), 'every number the joiner holds has its session started');
    });

    it('releases every lease on a clean stop, so another node takes over without waiting out the TTL', async () => {
      const other = otherNode(test, 'leaving');
      await other.keeper.start();
      await until(() => other.keeper.heldCount() > 0, 'the node to hold numbers');
      const stoppedAt = Date.now();
      await other.keeper.stop();
      assert.equal(other.running.size, 0, 'its sessions were stopped before the release');
      await test.gateway.keeper.tickSoon();
      const unowned = await test.gateway.store.db.selectFrom('number_leases').select('node_id').where('node_id', 'is', null).execute();
      assert.equal(unowned.length, 0, 'every number is owned again');
      assert.ok(Date.now() - stoppedAt < TTL_MS, 'before the released leases could have run out');
    });

    it('claims and releases thousands of numbers, past what one statement may carry', async () => {
      const { accountId } = await seedAccount(test.gateway, { numbers: 0 });
      const createdAt = new Date();
      await test.gateway.store.db.transaction().execute(async (trx) => {
        for (let index = 0; index < 2_500; index++) {
          await insertNumber(
            trx,
            newWhatsAppNumber(
              {
                id: newId('number'),
                accountId,
                phone: `+4477008${String(index).padStart(5, '0')}` as E164,
                engine: 'sandbox',
                status: 'connected',
              },
              createdAt,
            ),
          );
        }
      });
      const other = otherNode(test, 'bulk');
      await other.keeper.startPinned([]);
      await test.gateway.keeper.tickSoon();
      const unowned = await test.gateway.store.db.selectFrom('number_leases').select('number_id').where('node_id', 'is', null).execute();
      assert.equal(unowned.length, 0, 'every number is claimed in one tick');
      const held = test.gateway.keeper.heldCount();
      assert.ok(held >= 2_500);
      await other.keeper.stop();
    });

    it('stops its sessions before its leases can expire when renewals stall', async () => {
      const blocked = { on: false };
      const db = test.gateway.store.db.withPlugin({
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          while (blocked.on) await new Promise((resolve) => setTimeout(resolve, 20));
          return args.result;
        },
      });
      const running = new Set<string>();
      const keeper = new LeaseKeeper(
        { ...test.gateway.store, db },
        // The margin between its stop and its lease's end (a fifth of the TTL) must outlast a loaded
        // machine's timer delays (at a load of 11 on two cores, 300 to 600 ms of 600 were eaten), as
        // a lease now ends exactly with its renewal's term.
        { ttlMs: STALLING_TTL_MS, maxSessions: 1, nodeName: 'stalling', nodeUrl: null, drainMs: 1_000, sessionStartsPerSecond: 4 },
        silent,
      );
      keeper.attach({
        leasesGained: (leases) => {
          for (const lease of leases) running.add(lease.numberId);
        },
        leaseLost: async (numberId) => void running.delete(numberId),
        drain: async () => undefined,
        pendingStarts: () => 0,
      });
      const { accountId } = await seedAccount(test.gateway, { numbers: 0 });
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      // The test's own node holds the number and may reclaim an expired lease at its next tick,
      // so the lease is expired again until the stalling keeper's claim wins it.
      const expireUnlessStallingHolds = () =>
        test.gateway.store.db
          .updateTable('number_leases')
          .set({ node_id: null })
          .where('number_id', '=', number.id)
          .where('node_id', '!=', keeper.nodeId)
          .execute();
      await expireUnlessStallingHolds();
      await keeper.startPinned([number.id]);
      await until(async () => {
        if (running.has(number.id)) return true;
        await expireUnlessStallingHolds();
        await keeper.tickSoon();
        return false;
      }, 'the stalling keeper to claim the number');
      // Every lease of a node lasts until its node's expiry.
      const { lease_expires_at: expiresAt } = await test.gateway.store.db
        .selectFrom('cluster_nodes')
        .select('lease_expires_at')
        .where('id', '=', keeper.nodeId)
        .executeTakeFirstOrThrow();
      // A failed wait or assertion must still lift the stall and stop the keeper: a statement held
      // in the plugin keeps SQLite's one connection, so the suite's close would wait for it forever.
      blocked.on = true;
      try {
        try {
          await until(() => running.size === 0, 'the stalled node to stop its session');
          assert.ok(Date.now() < Number(expiresAt), 'it stopped before the lease it last renewed ran out');
        } finally {
          blocked.on = false;
        }
        // Once the database answers again, the fenced node gives the lease back instead of renewing
        // a lease whose session it no longer runs: released by its watchdog or, if its term ran out
        // first (a stall past the TTL on a loaded machine), as it starts a new term, unless another
        // node took the number over before either.
        await until(
          async () =>
            (
              await test.gateway.store.db
                .selectFrom('lease_changes')
                .select('id')
                .where('number_id', '=', number.id)
                .where('reason', 'in', ['released', 'expired', 'taken_over'])
                .where('from_node_id', '=', keeper.nodeId)
                .execute()
            ).length > 0,
          'the fenced node to give its lease back',
        );
      } finally {
        await keeper.stop();
      }
    });
  });
}
