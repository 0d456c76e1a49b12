import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import type { BlobStore } from '../../../src/media/blob-store.ts';
import { openBlobStore } from '../../../src/media/open-blob-store.ts';
import { blobStores, startS3Server, type TestS3Server } from '../../support/s3-server.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function readAll(stream: Readable | undefined): Promise<Buffer | undefined> {
  if (stream === undefined) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

// One contract, both stores: what the media service and the sweeper rely on.
for (const kind of blobStores) {
  describe(`the ${kind} blob store`, () => {
    let s3: TestS3Server | undefined;
    let store: BlobStore;
    let directory: string;

    before(async () => {
      directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-test-blobs-'));
      s3 = kind === 's3' ? await startS3Server() : undefined;
      store = await openBlobStore(loadConfig({ WAGW_MEDIA_DIR: directory, ...s3?.env }).media);
    });

    after(async () => {
      await store?.close();
      await s3?.close();
      fs.rmSync(directory, { recursive: true, force: true });
    });

    async function put(accountId: string, bytes: Buffer, chunkSize = 1000) {
      const writer = await store.begin();
      for (let offset = 0; offset < bytes.length; offset += chunkSize) await writer.write(bytes.subarray(offset, offset + chunkSize));
      const key = { accountId, sha256: sha256(bytes) };
      await writer.commit(key);
      return key;
    }

    it('a committed blob reads back whole and by range, byte for byte, and nothing is left spooled', async () => {
      const bytes = Buffer.from(Array.from({ length: 5000 }, (_, index) => index % 251));
      const key = await put('acc_one', bytes);
      assert.deepEqual(await readAll(await store.read(key)), bytes);
      assert.deepEqual(await readAll(await store.read(key, { start: 10, end: 19 })), bytes.subarray(10, 20));
      assert.deepEqual(await readAll(await store.read(key, { start: 4990, end: 4999 })), bytes.subarray(4990));
      assert.equal(await store.exists(key), true);
      assert.deepEqual(fs.readdirSync(path.join(directory, '.incoming')), []);
    });

    it('the same bytes committed twice are one blob, marked as written again', async () => {
      const bytes = Buffer.from('the same invoice, sent twice');
      const key = await put('acc_two', bytes);
      const first = (await store.touchedAt(key))!;
      await new Promise((resolve) => setTimeout(resolve, 20));
      await put('acc_two', bytes);
      assert.ok((await store.touchedAt(key))!.getTime() > first.getTime());
      const listed = [];
      for await (const blob of store.list()) if (blob.accountId === 'acc_two') listed.push(blob.sha256);
      assert.deepEqual(listed, [key.sha256]);
    });

    it('an aborted write leaves nothing, and a removed blob is gone', async () => {
      const writer = await store.begin();
      await writer.write(Buffer.from('never finished'));
      await writer.abort();
      assert.deepEqual(fs.readdirSync(path.join(directory, '.incoming')), []);
      const key = await put('acc_three', Buffer.from('short-lived'));
      await store.remove(key);
      assert.equal(await store.exists(key), false);
      assert.equal(await store.read(key), undefined);
      assert.equal(await store.touchedAt(key), undefined);
    });

    it('accounts are kept apart, and a key that could escape its place is refused', async () => {
      const bytes = Buffer.from("one account's file");
      await put('acc_four', bytes);
      assert.equal(await store.exists({ accountId: 'acc_five', sha256: sha256(bytes) }), false);
      await assert.rejects(store.read({ accountId: '..', sha256: sha256(bytes) }), /Not a blob key/);
      await assert.rejects(store.exists({ accountId: 'acc_four', sha256: '../../etc/passwd' }), /Not a blob key/);
    });
  });
}

describe('an S3 store that cannot be reached', () => {
  it('stops the start with the bucket named, not the first send', async () => {
    const s3 = await startS3Server();
    try {
      const config = loadConfig({ WAGW_MEDIA_DIR: os.tmpdir(), ...s3.env, WAGW_MEDIA_S3_BUCKET: 'no-such-bucket' }).media;
      await assert.rejects(openBlobStore(config), /The media bucket no-such-bucket cannot be reached \(HTTP 404/);
    } finally {
      await s3.close();
    }
  });
});
