import path from 'node:path';
import type { Config } from '../config.ts';
import type { BlobStore } from '../media/blob-store.ts';
import { openBlobStore } from '../media/open-blob-store.ts';
import { GatewayMetrics } from '../observability/metrics.ts';
import { openStore, type Store, type StoreBoundaries } from '../store/database.ts';
import { GroupCommitter } from '../store/group-commit.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { WriteFailures } from '../store/write-failures.ts';

export interface StorageParts {
  store: Store;
  committer: GroupCommitter;
  /** The latest failure of the database to take a write, for /health. */
  writeFailures: WriteFailures;
  blobs: BlobStore;
  /** The migrations this start applied (empty when the schema was already current). */
  appliedMigrations: string[];
  metrics: GatewayMetrics;
}

/** The database, migrated and proven durable, its group committer, the blob store and the metrics that read them. */
export async function openStorage(config: Config, boundaries: StoreBoundaries = {}): Promise<StorageParts> {
  const store = openStore(config.database, boundaries);
  let appliedMigrations: string[];
  let blobs: BlobStore;
  try {
    await store.assertDurable();
    appliedMigrations = await migrateToLatest(store.db, store.dialect);
    blobs = await openBlobStore(config.media);
  } catch (error) {
    await store.close();
    throw error;
  }
  // PostgreSQL commits a few batches side by side, leaving pool connections for reads.
  const concurrentBatches = config.database.dialect === 'postgres' ? Math.max(1, Math.floor(config.database.poolSize / 2)) : 1;
  const writeFailures = new WriteFailures();
  const committer = new GroupCommitter(
    store.db,
    config.groupCommit.maxBatchSize,
    concurrentBatches,
    config.groupCommit.enabled,
    writeFailures,
  );
  const metrics = new GatewayMetrics(store, {
    processMetrics: config.metrics.token !== undefined,
    volumes: {
      data: config.database.dialect === 'sqlite' ? path.dirname(config.database.path) : config.dataDirectory,
      media: config.media.directory,
    },
  });
  return { store, committer, writeFailures, blobs, appliedMigrations, metrics };
}
