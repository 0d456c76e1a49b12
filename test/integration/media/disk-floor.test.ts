import assert from 'node:assert/strict';
import { statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/domain/errors.ts';
import { DiskFloor } from '../../../src/media/disk-floor.ts';

const directory = os.tmpdir();

async function freeBytes(): Promise<number> {
  const stats = await statfs(directory);
  return stats.bavail * stats.bsize;
}

const refusedForSpace = (error: unknown) =>
  error instanceof AppError && error.code === 'insufficient_storage' && error.meta?.retry_after_seconds === 60;

describe('the free-disk floor, read from the real disk', () => {
  it('a floor below the free space lets a file through; one above it refuses with 503 insufficient_storage', async () => {
    await new DiskFloor({ directories: [directory], minFreeBytes: 0, minFreePercent: 0 }).assertRoom();
    // Free space moves as other processes write, so the floor is set far above it.
    const above = new DiskFloor({ directories: [directory], minFreeBytes: (await freeBytes()) * 2 + 1, minFreePercent: 0 });
    await assert.rejects(above.assertRoom(), refusedForSpace);
  });

  it('a file that would take the disk below the floor is refused before it is written', async () => {
    const floor = new DiskFloor({ directories: [directory], minFreeBytes: 0, minFreePercent: 0 });
    await assert.rejects(floor.assertRoom((await freeBytes()) * 2 + 1), refusedForSpace);
  });

  it('the percent figure applies when it is the larger: no disk is ever 100 % free', async () => {
    await assert.rejects(new DiskFloor({ directories: [directory], minFreeBytes: 0, minFreePercent: 100 }).assertRoom(), refusedForSpace);
  });

  it('every directory is asked, and one that does not exist yet is passed over', async () => {
    const missing = path.join(directory, `wagw-no-such-directory-${process.pid}`);
    await new DiskFloor({ directories: [missing, directory], minFreeBytes: 0, minFreePercent: 0 }).assertRoom();
    await assert.rejects(
      new DiskFloor({ directories: [missing, directory], minFreeBytes: Number.MAX_SAFE_INTEGER, minFreePercent: 0 }).assertRoom(),
      refusedForSpace,
    );
  });
});
