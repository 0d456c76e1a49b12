import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { CLEARING, forgetFinishedClears, markClearing, recordQueueClear } from '../../../src/store/repositories/queue-clears.ts';
import { readLedgerMarks } from '../../../src/store/repositories/send-ledger.ts';
import { releaseWaitingRows } from '../../../src/store/repositories/send-queue.ts';
import { countWaitingByReason, listDueOnNode, listWaitingPage } from '../../../src/store/repositories/waiting-messages.ts';
import { dialects, seedNumberRow, suiteStore } from '../../support/databases.ts';
import { holdLease } from '../../support/leases.ts';

// A clear of a number's queue is recorded once, whatever the queue's length (ADR 0066): what it
// takes never leaves, is counted and shown as being cancelled, and is marked (then settled by
// the runner) a batch at a time afterwards.
for (const dialect of dialects) {
  describe(`a clear of the queue, recorded once (${dialect})`, () => {
    const suite = suiteStore(dialect);

    /** `count` messages of the number waiting, created at `createdAt`, all due now. */
    async function waiting(number: WhatsAppNumber, count: number, createdAt: number): Promise<string[]> {
      const ids = Array.from({ length: count }, () => newId('message'));
      await suite.store.db
        .insertInto('messages')
        .values(
          ids.map((id, index) => ({
            id,
            account_id: number.accountId,
            number_id: number.id,
            direction: 'outbound',
            from_phone: number.phone,
            to_phone: '+14155550100',
            text: `waiting ${index}`,
            content_kind: 'text',
            status: 'queued',
            created_at: createdAt,
            updated_at: createdAt,
            scheduled_for: createdAt - 1_000 + index,
            expires_at: createdAt + 86_400_000,
            wait_reason: 'gap',
            first_contact: 0,
          })),
        )
        .execute();
      return ids;
    }

    it('takes what waited from before it in one write: none of it is released, listed due or read into the ledger; what came after is', async () => {
      const number = await seedNumberRow(suite.store);
      const lease = await holdLease(suite.store, number.id);
      const clearedAt = Date.now();
      const before = await waiting(number, 5, clearedAt - 10);
      assert.equal(await recordQueueClear(suite.store.db, number.id, new Date(clearedAt)), 5);
      const after = await waiting(number, 1, clearedAt + 1);

      const reasons = await suite.store.db.selectFrom('messages').select('wait_reason').where('id', 'in', before).execute();
      assert.deepEqual(
        reasons.map((row) => row.wait_reason),
        ['gap', 'gap', 'gap', 'gap', 'gap'],
        'the clear wrote no row of the queue',
      );
      assert.deepEqual(await countWaitingByReason(suite.store.db, number.id), { [CLEARING]: 5, gap: 1 });
      const page = await listWaitingPage(suite.store.db, number.id, 10);
      assert.deepEqual(
        page.map((message) => [message.id, message.waitReason]),
        [...before.map((id) => [id, CLEARING]), [after[0], 'gap']],
      );
      const due = await listDueOnNode(suite.store.db, lease.nodeId, new Date(clearedAt + 60_000), 100);
      assert.deepEqual(
        due.map((message) => message.id),
        after,
      );
      assert.deepEqual(
        (await readLedgerMarks(suite.store.db, number.id, new Date(0))).planned.map((mark) => mark.id),
        after,
      );
      assert.deepEqual([...(await releaseWaitingRows(suite.store.db, [...before, ...after], new Date()))], after);
    });

    it('is marked a batch at a time, of the number or of the numbers a node holds; a second clear takes only what the first did not', async () => {
      const number = await seedNumberRow(suite.store);
      const other = await seedNumberRow(suite.store);
      const lease = await holdLease(suite.store, number.id);
      const clearedAt = Date.now();
      await waiting(number, 5, clearedAt - 10);
      await waiting(other, 2, clearedAt - 10);
      assert.equal(await recordQueueClear(suite.store.db, number.id, new Date(clearedAt)), 5);
      assert.equal(await recordQueueClear(suite.store.db, other.id, new Date(clearedAt)), 2);
      const at = new Date(clearedAt + 5);
      assert.equal(await markClearing(suite.store.db, { numberId: number.id }, at, 2), 2);
      // The stand-in node holds the numbers of the file's other tests too.
      assert.ok((await markClearing(suite.store.db, { nodeId: lease.nodeId }, at, 1_000)) >= 3, 'the rest of the number the node holds');
      assert.equal(await markClearing(suite.store.db, { nodeId: lease.nodeId }, at, 1_000), 0);
      const marked = await suite.store.db
        .selectFrom('messages')
        .select(['wait_reason', 'expires_at'])
        .where('number_id', '=', number.id)
        .execute();
      assert.deepEqual(
        new Set(marked.map((row) => `${row.wait_reason} ${Number(row.expires_at)}`)),
        new Set([`${CLEARING} ${at.getTime()}`]),
      );
      assert.equal(await markClearing(suite.store.db, { numberId: other.id }, at, 10), 2);
      await waiting(number, 2, clearedAt + 1);
      assert.equal(await recordQueueClear(suite.store.db, number.id, new Date(clearedAt + 2)), 2);
      assert.deepEqual(await countWaitingByReason(suite.store.db, number.id), { [CLEARING]: 7 });
    });

    it('is forgotten once all it took is marked and it is older than the margin; what it took still never leaves', async () => {
      const number = await seedNumberRow(suite.store);
      const lease = await holdLease(suite.store, number.id);
      const clearedAt = Date.now();
      const taken = await waiting(number, 3, clearedAt - 10);
      await recordQueueClear(suite.store.db, number.id, new Date(clearedAt));
      const clears = () => suite.store.db.selectFrom('queue_clears').select('number_id').where('number_id', '=', number.id).execute();
      await forgetFinishedClears(suite.store.db, lease.nodeId, new Date(clearedAt + 1));
      assert.equal((await clears()).length, 1, 'kept while some of what it took is not marked');
      await markClearing(suite.store.db, { numberId: number.id }, new Date(clearedAt + 5), 10);
      await forgetFinishedClears(suite.store.db, lease.nodeId, new Date(clearedAt));
      assert.equal((await clears()).length, 1, 'kept within the margin');
      await forgetFinishedClears(suite.store.db, lease.nodeId, new Date(clearedAt + 1));
      assert.equal((await clears()).length, 0);
      assert.deepEqual([...(await releaseWaitingRows(suite.store.db, taken, new Date()))], []);
      assert.deepEqual(await countWaitingByReason(suite.store.db, number.id), { [CLEARING]: 3 });
    });
  });
}
