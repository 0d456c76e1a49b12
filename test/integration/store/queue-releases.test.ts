import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { SessionLease, WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { GroupCommitter } from '../../../src/store/group-commit.ts';
import { StaleLeaseError } from '../../../src/store/repositories/leases.ts';
import { insertMessage } from '../../../src/store/repositories/messages.ts';
import { queueRelease } from '../../../src/store/repositories/status-writes.ts';
import { countingStatements, dialects, seedNumberRow, suiteStore } from '../../support/databases.ts';
import { holdLease } from '../../support/leases.ts';

// The queue runner releases a pass's due messages together, and their releases meet in the
// committer's batch: one read of the leases that fence them and one update, however many
// messages of however many numbers the batch holds (a fence and an update each, before).
const STATEMENTS_PER_BATCH = 2;

for (const dialect of dialects) {
  describe(`queue releases once per batch (${dialect})`, () => {
    const suite = suiteStore(dialect);

    /** A number held by a stand-in node, with `count` messages waiting in its queue, due now. */
    async function seed(count: number): Promise<{ number: WhatsAppNumber; lease: SessionLease; ids: string[] }> {
      const number = await seedNumberRow(suite.store);
      const lease = await holdLease(suite.store, number.id);
      const at = new Date();
      const ids: string[] = [];
      for (let index = 0; index < count; index++) {
        const id = newId('message');
        await insertMessage(suite.store.db, {
          id,
          accountId: number.accountId,
          numberId: number.id,
          direction: 'outbound',
          fromPhone: number.phone,
          fromLid: null,
          toPhone: '+14155550100' as E164,
          text: `waiting ${index}`,
          contentKind: 'text',
          mediaId: null,
          structured: null,
          status: 'queued',
          engineMessageId: null,
          createdAt: at,
        });
        ids.push(id);
      }
      await suite.store.db
        .updateTable('messages')
        .set({ scheduled_for: at.getTime(), wait_reason: 'scheduled' })
        .where('id', 'in', ids)
        .execute();
      return { number, lease, ids };
    }

    async function rowsOf(ids: string[]): Promise<{ waiting: boolean; released: boolean; status: string }[]> {
      const rows = await suite.store.db
        .selectFrom('messages')
        .select(['id', 'status', 'scheduled_for', 'released_at'])
        .where('id', 'in', ids)
        .execute();
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => {
        const row = byId.get(id)!;
        return { waiting: row.scheduled_for !== null, released: row.released_at !== null, status: row.status };
      });
    }

    function release(committer: GroupCommitter, lease: SessionLease, ids: string[]): Promise<boolean>[] {
      return ids.map((id) =>
        committer.run(async (_trx, batch) => queueRelease(batch, lease, id)).then((outcome) => outcome.value === true),
      );
    }

    for (const [numbers, perNumber] of [
      [1, 1],
      [1, 20],
      [5, 4],
    ] as const) {
      it(`a batch of ${numbers * perNumber} release(s) over ${numbers} number(s) takes ${STATEMENTS_PER_BATCH} statements`, async () => {
        const seeded = [];
        for (let index = 0; index < numbers; index++) seeded.push(await seed(perNumber));
        const { db, statements } = countingStatements(suite.store.db);
        const committer = new GroupCommitter(db, 100);

        const released = await Promise.all(seeded.flatMap(({ lease, ids }) => release(committer, lease, ids)));
        assert.equal(statements(), STATEMENTS_PER_BATCH, 'the fence and one update');
        assert.ok(released.every(Boolean), 'every message was released');
        for (const { ids } of seeded)
          assert.deepEqual(
            await rowsOf(ids),
            ids.map(() => ({ waiting: false, released: true, status: 'queued' })),
          );
      });
    }

    it('a release under a lease no longer held is refused and its message still waits, beside one that goes', async () => {
      const stale = await seed(1);
      const current = await seed(1);
      await holdLease(suite.store, stale.number.id, stale.lease.epoch + 1);
      const committer = new GroupCommitter(suite.store.db, 100);

      const [refused, released] = await Promise.allSettled([
        ...release(committer, stale.lease, stale.ids),
        ...release(committer, current.lease, current.ids),
      ]);
      assert.equal(refused?.status, 'rejected');
      assert.ok(refused.status === 'rejected' && refused.reason instanceof StaleLeaseError);
      assert.deepEqual(released, { status: 'fulfilled', value: true });
      assert.deepEqual(await rowsOf(stale.ids), [{ waiting: true, released: false, status: 'queued' }]);
      assert.deepEqual(await rowsOf(current.ids), [{ waiting: false, released: true, status: 'queued' }]);
    });

    it('a message that has left the queue is not released, and one released is not released again', async () => {
      const { lease, ids } = await seed(2);
      await suite.store.db.updateTable('messages').set({ status: 'cancelled', scheduled_for: null }).where('id', '=', ids[0]!).execute();
      const committer = new GroupCommitter(suite.store.db, 100);

      assert.deepEqual(await Promise.all(release(committer, lease, ids)), [false, true]);
      assert.deepEqual(await Promise.all(release(committer, lease, [ids[1]!])), [false]);
      assert.deepEqual(await rowsOf(ids), [
        { waiting: false, released: false, status: 'cancelled' },
        { waiting: false, released: true, status: 'queued' },
      ]);
    });
  });
}
