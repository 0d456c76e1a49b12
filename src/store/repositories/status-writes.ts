import type { Transaction } from 'kysely';
import type { MessageStatus, SessionLease } from '../../domain/model.ts';
import type { BatchStep, BatchStepKind, EndOfBatch } from '../group-commit.ts';
import type { Database } from '../schema.ts';
import { StaleLeaseError } from './leases.ts';
import { releaseWaitingRows } from './send-queue.ts';
import { advanceRowsById, markRowsSent, readLeaseRows, type AdvancedStatus, type AdvanceRow, type SentRow } from './status-rows.ts';

/** What a queued status change came to; known once its batch has finished (as UnitAdmission is). */
export class BatchOutcome<T> {
  private decided = false;
  private result: T | undefined;

  decide(result: T | undefined): void {
    this.decided = true;
    this.result = result;
  }

  /** The report's result when the row changed; undefined when it did not. */
  get value(): T | undefined {
    if (!this.decided) throw new Error("A status change's outcome was read before its batch finished.");
    return this.result;
  }
}

/** What an item does once its row has changed (queue its event, say), in the same commit. */
type Report<T> = (trx: Transaction<Database>, batch: EndOfBatch) => Promise<T>;

interface Queued<Row> {
  row: Row;
  outcome: BatchOutcome<unknown>;
  report: Report<unknown>;
}

/**
 * A batch's owner-only status writes: the lease fence, the queue's releases, the `sent` records
 * and the receipts' advances, once per batch instead of once per item, at the batch's end after
 * the sends' rows (send-units.ts) and their chats (conversation-notes.ts).
 *
 * The fence reads every lease the batch's items carry in one statement, sorted by number (so
 * locked in one order on PostgreSQL, FOR KEY SHARE as assertLeaseHeld does), before any of the
 * updates it guards. A lease this node lost fails the whole batch with StaleLeaseError: nothing
 * of it is written, and the committer runs its items again one by one, where only the stale
 * ones are refused.
 */
class StatusWrites implements BatchStep {
  private readonly leases: SessionLease[] = [];
  private readonly sent: Queued<SentRow>[] = [];
  private readonly releases: { id: string; outcome: BatchOutcome<boolean> }[] = [];
  private readonly advances = new Map<
    string,
    { status: AdvancedStatus; allowedFrom: readonly MessageStatus[]; queued: Queued<AdvanceRow>[] }
  >();

  fence(lease: SessionLease): void {
    this.leases.push(lease);
  }

  markSent<T>(lease: SessionLease | undefined, row: SentRow, report: Report<T>): BatchOutcome<T> {
    if (lease !== undefined) this.fence(lease);
    const outcome = new BatchOutcome<T>();
    this.sent.push({ row, outcome, report });
    return outcome;
  }

  release(lease: SessionLease, id: string): BatchOutcome<boolean> {
    this.fence(lease);
    const outcome = new BatchOutcome<boolean>();
    this.releases.push({ id, outcome });
    return outcome;
  }

  advance<T>(
    lease: SessionLease | undefined,
    status: AdvancedStatus,
    allowedFrom: readonly MessageStatus[],
    row: AdvanceRow,
    report: Report<T>,
  ): BatchOutcome<T> {
    if (lease !== undefined) this.fence(lease);
    const outcome = new BatchOutcome<T>();
    const shape = `${status}:${allowedFrom.join(',')}`;
    let advances = this.advances.get(shape);
    if (advances === undefined) {
      advances = { status, allowedFrom, queued: [] };
      this.advances.set(shape, advances);
    }
    advances.queued.push({ row, outcome, report });
    return outcome;
  }

  async finish(trx: Transaction<Database>, batch: EndOfBatch): Promise<void> {
    await this.assertLeasesHeld(trx);
    if (this.releases.length > 0) {
      const released = await releaseWaitingRows(
        trx,
        this.releases.map((entry) => entry.id),
        new Date(),
      );
      for (const entry of this.releases) entry.outcome.decide(released.has(entry.id));
    }
    const changed: Queued<{ id: string }>[] = [];
    const unchanged: Queued<{ id: string }>[] = [];
    const sort = (queued: Queued<{ id: string }>[], moved: Set<string>) => {
      for (const entry of queued) (moved.has(entry.row.id) ? changed : unchanged).push(entry);
    };
    if (this.sent.length > 0)
      sort(
        this.sent,
        await markRowsSent(
          trx,
          this.sent.map((entry) => entry.row),
        ),
      );
    const shapes = [...this.advances.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, advances]) => advances);
    for (const { status, allowedFrom, queued } of shapes) {
      sort(
        queued,
        await advanceRowsById(
          trx,
          status,
          allowedFrom,
          queued.map((entry) => entry.row),
        ),
      );
    }
    for (const entry of unchanged) entry.outcome.decide(undefined);
    for (const entry of changed) entry.outcome.decide(await entry.report(trx, batch));
  }

  private async assertLeasesHeld(trx: Transaction<Database>): Promise<void> {
    if (this.leases.length === 0) return;
    const rows = await readLeaseRows(trx, [...new Set(this.leases.map((lease) => lease.numberId))]);
    const byNumber = new Map(rows.map((row) => [row.numberId, row]));
    const stale = [...this.leases]
      .sort((a, b) => (a.numberId < b.numberId ? -1 : a.numberId > b.numberId ? 1 : 0))
      .find((lease) => {
        const row = byNumber.get(lease.numberId);
        return row === undefined || row.nodeId !== lease.nodeId || row.epoch !== lease.epoch;
      });
    if (stale === undefined) return;
    const current = byNumber.get(stale.numberId);
    throw new StaleLeaseError(stale, current === undefined ? undefined : { nodeId: current.nodeId, epoch: current.epoch });
  }
}

const STATUS_WRITES: BatchStepKind<StatusWrites> = { rank: 3, create: () => new StatusWrites() };

/**
 * The fence of an owner-only write made at the batch's end, once for all the batch's writes of
 * the number: the caller's transaction commits only if the lease is still the number's current
 * one (see assertLeaseHeld for what the fence guarantees; this is the same read, batched).
 */
export function fenceLease(batch: EndOfBatch, lease: SessionLease): void {
  batch.step(STATUS_WRITES).fence(lease);
}

/**
 * Records the engine's answer for a send at the batch's end, under the lease of the session that
 * sent it; `report` runs, in the same commit, only if the row changed (an `onlyIfPending` record
 * of a row no longer pending does not). Without a lease the record is not fenced: only a send
 * whose number moved after the engine took it is recorded so (SendOutcomes.recordSentAfterMove).
 */
export function queueSentRecord<T>(batch: EndOfBatch, lease: SessionLease | undefined, row: SentRow, report: Report<T>): BatchOutcome<T> {
  return batch.step(STATUS_WRITES).markSent(lease, row, report);
}

/**
 * A waiting message's release at the batch's end (releaseWaitingRows), under the lease of the
 * number's owner: one fence and one update for all the batch's releases, whatever their numbers.
 * The outcome is whether the message was still waiting, and so is now released.
 */
export function queueRelease(batch: EndOfBatch, lease: SessionLease, messageId: string): BatchOutcome<boolean> {
  return batch.step(STATUS_WRITES).release(lease, messageId);
}

/**
 * A receipt's advance of its row by primary key at the batch's end, fenced unless `lease` is
 * undefined (a receipt heard after its number moved); `report` runs only if the row moved.
 */
export function queueStatusAdvance<T>(
  batch: EndOfBatch,
  lease: SessionLease | undefined,
  status: AdvancedStatus,
  allowedFrom: readonly MessageStatus[],
  row: AdvanceRow,
  report: Report<T>,
): BatchOutcome<T> {
  return batch.step(STATUS_WRITES).advance(lease, status, allowedFrom, row, report);
}
