import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { handledElsewhere } from '../domain/promises.ts';

/**
 * A file being received, in `<directory>/.incoming` until its hash is known. Both blob stores
 * spool this way: the filesystem store renames the file into place, the S3 store uploads it
 * with its length known. A crash leaves the file behind, and `sweepSpool` removes it later.
 */
export interface SpoolFile {
  readonly path: string;
  write(chunk: Buffer): Promise<void>;
  /** Flushes the bytes to the disk and closes the file; the file stays until `discard`. */
  finish(options: { durable: boolean }): Promise<void>;
  /** Closes the file if open and removes it. */
  discard(): Promise<void>;
}

export async function openSpoolFile(directory: string): Promise<SpoolFile> {
  const incoming = spoolDirectory(directory);
  await fsp.mkdir(incoming, { recursive: true, mode: 0o700 });
  const file = path.join(incoming, `${Date.now()}-${randomBytes(8).toString('hex')}`);
  const handle = await fsp.open(file, 'wx', 0o600);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  return {
    path: file,
    write: async (chunk) => {
      let offset = 0;
      while (offset < chunk.length) offset += (await handle.write(chunk, offset)).bytesWritten;
    },
    finish: async ({ durable }) => {
      if (durable) await handle.sync();
      await close();
    },
    discard: async () => {
      // The file is removed next, so a failure to close it loses nothing; a failure to remove it is the caller's.
      await close().catch(handledElsewhere);
      await fsp.rm(file, { force: true });
    },
  };
}

/** Removes spooled files older than `olderThan`: writes a crash cut off, never committed. */
export async function sweepSpool(directory: string, olderThan: Date): Promise<number> {
  const incoming = spoolDirectory(directory);
  let removed = 0;
  for (const name of await fsp.readdir(incoming).catch(() => [] as string[])) {
    const file = path.join(incoming, name);
    const stat = await fsp.stat(file).catch(() => undefined);
    if (stat !== undefined && stat.mtime < olderThan) {
      await fsp.rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}

function spoolDirectory(directory: string): string {
  return path.join(directory, '.incoming');
}
