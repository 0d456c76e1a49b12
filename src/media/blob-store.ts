import type { Readable } from 'node:stream';

/** Where a blob's bytes are, by the account that owns them and their SHA-256 (hex). */
export interface BlobKey {
  accountId: string;
  sha256: string;
}

/** A byte range to read, both ends included, as HTTP's Range counts them. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * A blob being written: bytes go in through `write`, and `commit` publishes them under their
 * hash, which is known only once the last byte is in. Until then nothing is visible; `abort`
 * throws the bytes away.
 */
export interface BlobWriter {
  write(chunk: Buffer): Promise<void>;
  /**
   * Makes the bytes durable and readable under the key; a blob already there is kept as it is,
   * and marked as just written, so that a sweep deciding about it now leaves it alone.
   */
  commit(key: BlobKey): Promise<void>;
  abort(): Promise<void>;
}

/**
 * The media blob store port. Media bytes never enter the SQL database: a media row names its
 * blob by key, and the same file stored twice by one account is one blob. The filesystem store
 * is the embedded default; every node of a cluster must see the same blobs.
 */
export interface BlobStore {
  begin(): Promise<BlobWriter>;
  /** The blob's bytes, or only `range` of them; undefined when there is no such blob. */
  read(key: BlobKey, range?: ByteRange): Promise<Readable | undefined>;
  exists(key: BlobKey): Promise<boolean>;
  /** When the blob was last written or committed again (a second commit of the same bytes counts); undefined when absent. */
  touchedAt(key: BlobKey): Promise<Date | undefined>;
  remove(key: BlobKey): Promise<void>;
  /** Every blob, for the orphan sweep. */
  list(): AsyncIterable<BlobKey & { writtenAt: Date }>;
  /** Removes local temporary files of writes a crash cut off, older than `olderThan`. */
  sweepIncoming(olderThan: Date): Promise<number>;
  close(): Promise<void>;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;
const SAFE_ACCOUNT = /^[A-Za-z0-9_-]{1,100}$/;

export function isValidKey(key: BlobKey): boolean {
  return HEX_SHA256.test(key.sha256) && SAFE_ACCOUNT.test(key.accountId);
}

/** Refuses a key that could name a path outside the store: both parts are checked, never trusted. */
export function assertValidKey(key: BlobKey): void {
  if (!isValidKey(key)) throw new Error(`Not a blob key: ${key.accountId}/${key.sha256}`);
}
