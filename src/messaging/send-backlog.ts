import { AppError } from '../domain/errors.ts';

/** What an overloaded answer tells a client to wait: about how long a full backlog takes to clear. */
const OVERLOAD_RETRY_AFTER_SECONDS = 1;

/**
 * The sends this node is working on at once. Past the limit (WAGW_MAX_PENDING_SENDS) a send is
 * refused at once with 503 `overloaded` and Retry-After, before any work: a node past what its
 * database and engines take would otherwise queue every request behind the backlog, and every
 * answer would come later and later for all clients at once.
 */
export class SendBacklog {
  private pending = 0;

  constructor(private readonly maxPending: number | null) {}

  async admit<T>(send: () => Promise<T>): Promise<T> {
    if (this.maxPending !== null && this.pending >= this.maxPending) {
      throw new AppError(
        'overloaded',
        `This node is working on ${this.pending} sends, as many as it takes at once; try again after Retry-After.`,
        {
          pending_sends: this.pending,
          limit: this.maxPending,
          retry_after_seconds: OVERLOAD_RETRY_AFTER_SECONDS,
        },
      );
    }
    this.pending += 1;
    try {
      return await send();
    } finally {
      this.pending -= 1;
    }
  }
}
