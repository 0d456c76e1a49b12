import { AppError } from '../domain/errors.ts';
import { MediaGoneError } from '../engines/engine.ts';
import { handledElsewhere } from '../domain/promises.ts';

/** A download that took longer than its budget. */
class DownloadTimedOut extends Error {
  constructor(budgetMs: number) {
    super(`The download took longer than ${budgetMs} ms.`);
  }
}

/**
 * The bytes `start` fetches, cut off once `budgetMs` has passed since the call, however steadily
 * they come: an incoming file waits for nothing longer, so that its message is reported on time.
 * Cutting off ends the source (`return()`), which closes its stream.
 */
export async function withinBudget(start: () => Promise<AsyncIterable<Buffer>>, budgetMs: number): Promise<AsyncIterable<Buffer>> {
  const deadline = Date.now() + budgetMs;
  const source = await beforeDeadline(start(), deadline, budgetMs);
  return (async function* () {
    const iterator = source[Symbol.asyncIterator]();
    let finished = false;
    try {
      for (;;) {
        const next = await beforeDeadline(iterator.next(), deadline, budgetMs);
        if (next.done) {
          finished = true;
          return;
        }
        yield next.value;
      }
    } finally {
      // Ends the source when the reader stops early or the budget runs out; not awaited, since a
      // source stuck mid-read may never answer.
      if (!finished) void iterator.return?.()?.catch?.(handledElsewhere);
    }
  })();
}

async function beforeDeadline<T>(work: Promise<T>, deadline: number, budgetMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DownloadTimedOut(budgetMs)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    // After a time-out nobody awaits `work`: its late failure was already answered as the time-out.
    work.catch(handledElsewhere);
  }
}

/**
 * Why a download failed, and whether another try could succeed. A file the gateway refused
 * (too large, a type it contradicts) is refused again next time; a network failure or a slow
 * server may pass.
 */
export function classifyDownloadFailure(error: unknown): { reason: string; transient: boolean } {
  if (error instanceof DownloadTimedOut) return { reason: 'download_timed_out', transient: true };
  if (error instanceof MediaGoneError) return { reason: 'media_expired', transient: false };
  // A full disk is the gateway's state, not the file's: the same bytes fit once space is freed.
  if (error instanceof AppError && error.code === 'insufficient_storage') return { reason: error.code, transient: true };
  if (error instanceof AppError) return { reason: error.code, transient: false };
  return { reason: 'download_failed', transient: true };
}
