import { statfs } from 'node:fs/promises';
import { AppError } from '../domain/errors.ts';
import path from 'node:path';

/** How soon a client refused for want of disk is told to come back: a sweep or an operator may free space by then. */
const RETRY_AFTER_SECONDS = 60;

export interface DiskFloorSettings {
  /** The media directory and, for SQLite, the database's: every disk a stored file or its row takes space on. */
  directories: readonly string[];
  minFreeBytes: number;
  minFreePercent: number;
}

/**
 * The free space the gateway leaves on its disks. Files stop being written below it, so that
 * media never fill the disk the database needs to commit; a database that cannot write loses
 * more than a file that waits. The floor of a disk is the larger of the byte and percent figures.
 */
export class DiskFloor {
  constructor(private readonly settings: DiskFloorSettings) {}

  /** Refuses with 503 insufficient_storage unless every disk would keep its floor after `moreBytes`. */
  async assertRoom(moreBytes = 0): Promise<void> {
    for (const directory of this.settings.directories) {
      const space = await freeSpace(directory);
      if (space === undefined) continue;
      const floor = Math.max(this.settings.minFreeBytes, Math.ceil((space.totalBytes * this.settings.minFreePercent) / 100));
      if (space.freeBytes - moreBytes < floor) {
        throw new AppError(
          'insufficient_storage',
          `The gateway's disk is nearly full, so no file is stored until space is freed; try again in ${RETRY_AFTER_SECONDS} s.`,
          {
            retry_after_seconds: RETRY_AFTER_SECONDS,
          },
        );
      }
    }
  }
}

/** The disk's free and total bytes, as an unprivileged process sees them: of the directory, or of its nearest existing parent. */
export async function freeSpace(directory: string): Promise<{ freeBytes: number; totalBytes: number } | undefined> {
  try {
    const stats = await statfs(directory);
    return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // A directory not made yet (the data directory of a PostgreSQL node, say) will be made on
    // the disk of its nearest existing parent: that disk's space is the one that counts.
    const parent = path.dirname(directory);
    return parent === directory ? undefined : freeSpace(parent);
  }
}
