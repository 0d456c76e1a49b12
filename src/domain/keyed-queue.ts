/**
 * Runs work one at a time per key, in the order it was handed in, and different keys side by
 * side: what a number's (or an inbox's) read-modify-write on one node needs, so that two events of
 * one number never both compute from the same previous state. A failed run does not stop the ones
 * queued behind it; its caller gets its error.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, settled);
    void settled.then(() => {
      // The last run of the key forgets it, so that the map holds only keys with work under way.
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return run;
  }
}
