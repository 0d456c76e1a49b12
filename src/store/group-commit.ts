import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';
import { UnsyncedCommitError } from './wal-sync.ts';
import type { WriteFailures } from './write-failures.ts';

type Work<T> = (trx: Transaction<Database>, batch: EndOfBatch) => Promise<T>;

/** Work that a batch does once for all its items, after every item's own work and before the commit. */
export interface BatchStep {
  finish(trx: Transaction<Database>, batch: EndOfBatch): Promise<void>;
}

/**
 * Makes a batch's step on first use; one object per kind of step, used as its key. `rank` sets
 * when the step runs: every batch runs its steps in the same order, whichever item asked first.
 */
export interface BatchStepKind<Step extends BatchStep> {
  readonly rank: number;
  create(): Step;
}

/**
 * The steps of one transaction's batch. An item asks for a step by its kind and adds its part;
 * the steps run by rank once every item has run, and a step may add to a later one.
 *
 * A statement that would take a hot row lock per item (the account's monthly usage, a chat) is
 * made once per batch this way, so the lock is held only from that statement to the commit. And
 * because every batch takes those locks in one order (the steps' ranks, each step's rows by
 * key), two batches committing side by side on PostgreSQL wait for each other instead of
 * deadlocking.
 */
export class EndOfBatch {
  private readonly steps = new Map<BatchStepKind<BatchStep>, BatchStep>();
  private readonly finished = new Set<BatchStepKind<BatchStep>>();

  step<Step extends BatchStep>(kind: BatchStepKind<Step>): Step {
    if (this.finished.has(kind)) throw new Error('A batch step was added to after it ran; give the later step a higher rank.');
    let step = this.steps.get(kind);
    if (step === undefined) {
      step = kind.create();
      this.steps.set(kind, step);
    }
    return step as Step;
  }

  async finish(trx: Transaction<Database>): Promise<void> {
    for (;;) {
      let next: BatchStepKind<BatchStep> | undefined;
      for (const kind of this.steps.keys()) {
        if (!this.finished.has(kind) && (next === undefined || kind.rank < next.rank)) next = kind;
      }
      if (next === undefined) return;
      this.finished.add(next);
      await this.steps.get(next)!.finish(trx, this);
    }
  }
}

/** Runs items' work in one transaction, then the batch's steps: the body of every transaction the committer opens. */
async function runBatch(trx: Transaction<Database>, works: Work<unknown>[]): Promise<unknown[]> {
  const batch = new EndOfBatch();
  const outputs: unknown[] = [];
  for (const work of works) outputs.push(await work(trx, batch));
  await batch.finish(trx);
  return outputs;
}

/**
 * PostgreSQL's answers to two transactions that collided: a deadlock (40P01) or a serialization
 * failure (40001). Nothing is wrong with the write itself; it is run again, and these are not
 * the write failures /health reports.
 */
const TRANSIENT_CONFLICT_CODES: ReadonlySet<string> = new Set(['40P01', '40001']);
/** Attempts of one write that keeps colliding, each after a short random pause. */
const CONFLICT_ATTEMPTS = 5;
const CONFLICT_PAUSE_MAX_MS = 20;

function isTransientConflict(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && TRANSIENT_CONFLICT_CODES.has(code);
}

interface PendingWork {
  work: Work<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * Batches concurrent writes into one transaction, so that many requests share one fsync.
 *
 * A 200 from the send API promises that the row is on disk, which costs a durable commit. Paid
 * per request, that commit would cap throughput at the disk's fsync rate. Instead, every write
 * that arrives while a commit is in flight waits for the next batch, and each caller's promise
 * settles only after the batch that holds its write has committed.
 *
 * If a batch fails, its items are retried one transaction each, so that one bad write cannot
 * fail its neighbours; a transaction that collided with another (a deadlock on PostgreSQL) is
 * run again a few times. Items must therefore be safe to run again after a rollback. An item's
 * result may depend on the batch's steps (see EndOfBatch), which have run by the time the
 * caller's promise settles.
 */
export class GroupCommitter {
  private queue: PendingWork[] = [];
  private readonly flushing = new Set<Promise<void>>();
  private scheduled = false;

  /**
   * `concurrentBatches` above 1 lets batches commit side by side on a connection pool
   * (PostgreSQL), hiding each statement's round trip; SQLite has one writer and takes 1.
   * `grouping` false gives every write a transaction of its own, as many at once as the
   * connections allow: the same durability without the batching, to measure what it saves.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxBatchSize: number,
    private readonly concurrentBatches = 1,
    private readonly grouping = true,
    /** Told of every failed transaction, so that /health can say when the store cannot write. */
    private readonly writeFailures?: WriteFailures,
  ) {}

  run<T>(work: Work<T>): Promise<T> {
    if (!this.grouping) return this.runInOwnTransaction(work);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Resolves once every write queued so far has committed or failed. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing.size > 0 || this.scheduled) {
      if (this.flushing.size > 0) await Promise.allSettled([...this.flushing]);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing.size >= this.concurrentBatches) return;
    this.scheduled = true;
    // setImmediate lets every request already read off the sockets join the same batch.
    setImmediate(() => {
      this.scheduled = false;
      const flush: Promise<void> = this.flush().finally(() => {
        this.flushing.delete(flush);
        if (this.queue.length > 0) this.schedule();
      });
      this.flushing.add(flush);
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatchSize);
    if (batch.length === 0) return;
    if (batch.length === 1) {
      await this.runAlone(batch[0]!);
      return;
    }
    let results: unknown[];
    try {
      results = await this.db.transaction().execute((trx) =>
        runBatch(
          trx,
          batch.map((item) => item.work),
        ),
      );
    } catch (error) {
      if (!isTransientConflict(error)) this.writeFailures?.observe(error);
      // The batch committed but its log could not be synced: its work is done, and running it
      // again would do it twice. Every item hears of the outage instead.
      if (error instanceof UnsyncedCommitError) {
        for (const item of batch) item.reject(error);
        return;
      }
      for (const item of batch) await this.runAlone(item);
      return;
    }
    batch.forEach((item, index) => {
      item.resolve(results[index]);
    });
  }

  private runInOwnTransaction<T>(work: Work<T>): Promise<T> {
    const running = this.runOne(work);
    const settled: Promise<void> = running.then(
      () => undefined,
      (error: unknown) => this.writeFailures?.observe(error),
    );
    this.flushing.add(settled);
    void settled.then(() => this.flushing.delete(settled));
    return running;
  }

  private async runAlone(item: PendingWork): Promise<void> {
    try {
      item.resolve(await this.runOne(item.work));
    } catch (error) {
      this.writeFailures?.observe(error);
      item.reject(error);
    }
  }

  /** One item in a transaction of its own, run again while it collides with another transaction. */
  private async runOne<T>(work: Work<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.db.transaction().execute((trx) => runBatch(trx, [work])))[0] as T;
      } catch (error) {
        if (!isTransientConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * CONFLICT_PAUSE_MAX_MS));
      }
    }
  }
}
