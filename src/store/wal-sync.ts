import fs from 'node:fs';

/** Makes a file's written bytes durable; the gateway's is `fs.fsync` on libuv's thread pool. */
export type FileSync = (fd: number) => Promise<void>;

export const fsyncOnThreadPool: FileSync = (fd) =>
  new Promise((resolve, reject) => {
    fs.fsync(fd, (error) => (error === null ? resolve() : reject(error)));
  });

/**
 * A commit that SQLite made and others can already read, but whose log could not be made
 * durable. Its code is an I/O error's, so callers answer it as a storage outage (503); it is
 * never retried, because the transaction is not rolled back: running its work again would do it
 * twice.
 */
export class UnsyncedCommitError extends Error {
  readonly code = 'SQLITE_IOERR_FSYNC';

  constructor(cause: unknown) {
    super('The commit could not be made durable: syncing the SQLite log to disk failed.', { cause });
    this.name = 'UnsyncedCommitError';
  }
}

/**
 * Syncs SQLite's write-ahead log (the `-wal` file) through a descriptor of its own, off the
 * event loop, for a connection that runs with synchronous=NORMAL (ADR 0037). A commit there
 * writes the log without syncing it; waiting for `sync()` after the commit gives it back the
 * durability of synchronous=FULL.
 *
 * The descriptor is opened at the first sync after a commit, when SQLite has the log open: from
 * then until the connection closes, SQLite keeps that file (it truncates it in place after a
 * checkpoint, and deletes it only when the last connection closes), so the descriptor names the
 * live log, and an fsync through any descriptor of a file syncs all of it.
 *
 * Syncs that are asked for while one runs share the next one, since a sync covers every byte
 * written before it started. Once a sync has failed, every later one fails too: the kernel may
 * have dropped the pages it could not write and report the next sync as a success, and each
 * frame of the log is checksummed together with the frames before it, so no later commit can be
 * trusted to survive either. A restart recovers whatever the disk holds.
 */
export class WalSync {
  private fd: number | undefined;
  private running: Promise<void> | undefined;
  private following: Promise<void> | undefined;
  private failure: UnsyncedCommitError | undefined;

  constructor(
    private readonly walPath: string,
    private readonly fileSync: FileSync = fsyncOnThreadPool,
  ) {}

  /** Resolves once every commit made before the call is on disk. */
  sync(): Promise<void> {
    if (this.running === undefined) return this.start();
    this.following ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.following = undefined;
        return this.start();
      });
    return this.following;
  }

  /** Waits for the syncs under way, then lets the descriptor go; the connection is closed after. */
  async close(): Promise<void> {
    while (this.running !== undefined || this.following !== undefined) {
      await Promise.allSettled([this.running, this.following]);
    }
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private start(): Promise<void> {
    const running = this.syncOnce().finally(() => {
      if (this.running === running) this.running = undefined;
    });
    this.running = running;
    return running;
  }

  private async syncOnce(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    try {
      this.fd ??= openIfPresent(this.walPath);
      // No log yet: the statement wrote nothing (a pragma on a new database), so nothing waits.
      if (this.fd !== undefined) await this.fileSync(this.fd);
    } catch (error) {
      this.failure = new UnsyncedCommitError(error);
      throw this.failure;
    }
  }
}

function openIfPresent(file: string): number | undefined {
  try {
    return fs.openSync(file, fs.constants.O_RDWR);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
