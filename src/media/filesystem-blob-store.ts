import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { assertValidKey, type BlobKey, type BlobStore, type BlobWriter, type ByteRange } from './blob-store.ts';

/**
 * Blobs as files under the data directory: `<root>/<account>/<sha256>`. A write goes to a
 * temporary file in `<root>/.incoming`, is fsynced, and is renamed into place, and the
 * directory is fsynced too, so a blob is either whole and durable or absent, even across a
 * crash. Temporary files a crash leaves behind are removed by `sweepIncoming`.
 */
export class FilesystemBlobStore implements BlobStore {
  private readonly incoming: string;

  constructor(private readonly root: string) {
    this.incoming = path.join(root, '.incoming');
  }

  async begin(): Promise<BlobWriter> {
    await fsp.mkdir(this.incoming, { recursive: true, mode: 0o700 });
    const temporary = path.join(this.incoming, `${Date.now()}-${randomBytes(8).toString('hex')}`);
    const handle = await fsp.open(temporary, 'wx', 0o600);
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await handle.close();
    };
    return {
      write: async (chunk) => {
        let offset = 0;
        while (offset < chunk.length) offset += (await handle.write(chunk, offset)).bytesWritten;
      },
      commit: async (key) => {
        const target = this.pathOf(key);
        await handle.sync();
        await close();
        await fsp.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        // The same bytes under the same hash: the blob is already there, and stays as it is.
        if (await exists(target)) {
          await fsp.rm(temporary, { force: true });
          const now = new Date();
          await fsp.utimes(target, now, now);
          return;
        }
        await fsp.rename(temporary, target);
        await syncDirectory(path.dirname(target));
      },
      abort: async () => {
        await close().catch(() => {});
        await fsp.rm(temporary, { force: true });
      },
    };
  }

  async read(key: BlobKey, range?: ByteRange): Promise<Readable | undefined> {
    const file = this.pathOf(key);
    if (!(await exists(file))) return undefined;
    return fs.createReadStream(file, range === undefined ? {} : { start: range.start, end: range.end });
  }

  exists(key: BlobKey): Promise<boolean> {
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
        if (stat?.isFile()) yield { accountId: account.name, sha256: name, writtenAt: stat.mtime };
      }
    }
  }

  /** Removes temporary files older than `olderThan`: writes a crash cut off, never committed. */
  async sweepIncoming(olderThan: Date): Promise<number> {
    let removed = 0;
    for (const name of await fsp.readdir(this.incoming).catch(() => [] as string[])) {
      const file = path.join(this.incoming, name);
      const stat = await fsp.stat(file).catch(() => undefined);
      if (stat !== undefined && stat.mtime < olderThan) {
        await fsp.rm(file, { force: true });
        removed += 1;
      }
    }
    return removed;
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
