import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { openSpoolFile, sweepSpool } from './spool-file.ts';
import { assertValidKey, isValidKey, type BlobKey, type BlobStore, type BlobWriter, type ByteRange } from './blob-store.ts';

/**
 * Blobs as files under the data directory: `<root>/<account>/<sha256>`. A write goes to a
 * temporary file in `<root>/.incoming`, is fsynced, and is renamed into place, and the
 * directory is fsynced too, so a blob is either whole and durable or absent, even across a
 * crash. Temporary files a crash leaves behind are removed by `sweepIncoming`.
 */
export class FilesystemBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  async begin(): Promise<BlobWriter> {
    const spool = await openSpoolFile(this.root);
    return {
      write: (chunk) => spool.write(chunk),
      commit: async (key) => {
        const target = this.pathOf(key);
        await spool.finish({ durable: true });
        await fsp.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        // The same bytes under the same hash: the blob is already there, and stays as it is.
        if (await exists(target)) {
          await spool.discard();
          const now = new Date();
          await fsp.utimes(target, now, now);
          return;
        }
        await fsp.rename(spool.path, target);
        await syncDirectory(path.dirname(target));
      },
      abort: () => spool.discard(),
    };
  }
  async read(key: BlobKey, range?: ByteRange): Promise<Readable | undefined> {
    const file = this.pathOf(key);
    if (!(await exists(file))) return undefined;
    return fs.createReadStream(file, range === undefined ? {} : { start: range.start, end: range.end });
  }

  async exists(key: BlobKey): Promise<boolean> {
    return exists(this.pathOf(key));
  }

  async touchedAt(key: BlobKey): Promise<Date | undefined> {
    const stat = await fsp.stat(this.pathOf(key)).catch(() => undefined);
    return stat?.mtime;
  }

  async remove(key: BlobKey): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async *list(): AsyncIterable<BlobKey & { writtenAt: Date }> {
    const accounts = await fsp.readdir(this.root, { withFileTypes: true }).catch(() => []);
    for (const account of accounts) {
      if (!account.isDirectory() || account.name.startsWith('.')) continue;
      for (const name of await fsp.readdir(path.join(this.root, account.name))) {
        const stat = await fsp.stat(path.join(this.root, account.name, name)).catch(() => undefined);
        const key = { accountId: account.name, sha256: name };
        // A file the store did not write is never touched.
        if (stat?.isFile() && isValidKey(key)) yield { ...key, writtenAt: stat.mtime };
      }
    }
  }

  /** Removes temporary files older than `olderThan`: writes a crash cut off, never committed. */
  sweepIncoming(olderThan: Date): Promise<number> {
    return sweepSpool(this.root, olderThan);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private pathOf(key: BlobKey): string {
    assertValidKey(key);
    return path.join(this.root, key.accountId, key.sha256);
  }
}

async function exists(file: string): Promise<boolean> {
  return fsp.access(file).then(
    () => true,
    () => false,
  );
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await fsp.open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
