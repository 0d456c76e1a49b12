import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { FilesystemBlobStore } from '../../src/media/filesystem-blob-store.ts';
import { dialects } from '../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../support/gateway.ts';
import { samples } from '../support/media-samples.ts';

const HOUR = 3_600_000;

for (const dialect of dialects) {
  describe(`media retention and orphan sweeps (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let blobs: FilesystemBlobStore;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway);
      blobs = new FilesystemBlobStore(test.gateway.config.media.directory);
    });

    after(() => test?.close());

    const blobPath = (sha256: string) => path.join(test.gateway.config.media.directory, account.accountId, sha256);
    const age = (file: string, ms: number) => fs.utimesSync(file, new Date(Date.now() - ms), new Date(Date.now() - ms));
    const upload = (bytes: Buffer) => test.gateway.media.ingest(Readable.from([bytes]), { accountId: account.accountId, source: 'upload' });
    const download = (id: string) => test.inject({ method: 'GET', url: `/media/${id}`, headers: { authorization: `Bearer ${account.apiKey}` } });
    const expire = (id: string) => test.gateway.store.db.updateTable('media').set({ expires_at: Date.now() - 1 }).where('id', '=', id).execute();

    it('an expired upload is removed, row marked and bytes gone, and its id answers 404', async () => {
      const media = await upload(samples.pdf(1111));
      age(blobPath(media.sha256), 25 * HOUR);
      await expire(media.id);
      assert.ok((await test.gateway.mediaSweeper.sweepExpired()) >= 1);
      assert.equal(fs.existsSync(blobPath(media.sha256)), false);
      const row = await test.gateway.store.db.selectFrom('media').select('removed_at').where('id', '=', media.id).executeTakeFirstOrThrow();
      assert.notEqual(row.removed_at, null, 'the row stays, marked removed');
      assert.equal((await download(media.id)).statusCode, 404);
    });

    it('bytes another kept object uses stay, and so do bytes written within the hour', async () => {
      const bytes = samples.pdf(2222);
      const expiring = await upload(bytes);
      const kept = await upload(bytes);
      age(blobPath(kept.sha256), 25 * HOUR);
      await expire(expiring.id);
      await test.gateway.mediaSweeper.sweepExpired();
      assert.deepEqual((await download(kept.id)).rawPayload, bytes, 'the other object still has its bytes');

      const fresh = await upload(samples.pdf(3333));
      await expire(fresh.id);
      await test.gateway.mediaSweeper.sweepExpired();
      assert.equal(fs.existsSync(blobPath(fresh.sha256)), true, 'a blob written within the grace period is left for a later sweep');
    });

    it('a blob no row names (a crash between the two writes) goes once it is old; a young one stays', async () => {
      const orphanBytes = samples.jpeg(4444);
      const sha256 = createHash('sha256').update(orphanBytes).digest('hex');
      const writer = await blobs.begin();
      await writer.write(orphanBytes);
      await writer.commit({ accountId: account.accountId, sha256 });
      assert.equal(await test.gateway.mediaSweeper.sweepOrphans(), 0, 'too young to judge');
      age(blobPath(sha256), 2 * HOUR);
      assert.ok((await test.gateway.mediaSweeper.sweepOrphans()) >= 1);
      assert.equal(fs.existsSync(blobPath(sha256)), false);
    });

    it('a write a crash cut off leaves a temporary file, which goes after the grace period', async () => {
      const writer = await blobs.begin();
      await writer.write(Buffer.from('half a file'));
      const incoming = path.join(test.gateway.config.media.directory, '.incoming');
      const [temporary] = fs.readdirSync(incoming);
      age(path.join(incoming, temporary!), 2 * HOUR);
      await test.gateway.mediaSweeper.sweepOrphans();
      assert.equal(fs.existsSync(path.join(incoming, temporary!)), false);
      await writer.abort();
    });

    it('committing bytes that are already stored marks them as just written', async () => {
      const bytes = samples.pdf(5555);
      const first = await upload(bytes);
      age(blobPath(first.sha256), 5 * HOUR);
      const before = fs.statSync(blobPath(first.sha256)).mtimeMs;
      await upload(bytes);
      assert.ok(fs.statSync(blobPath(first.sha256)).mtimeMs > before + HOUR, 'the second commit refreshed the blob');
    });
  });
}
