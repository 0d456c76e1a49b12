import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';
import { blobStores } from '../../support/s3-server.ts';

const HOUR = 3_600_000;
const hoursFromNow = (hours: number) => new Date(Date.now() + hours * HOUR);

for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`media retention and orphan sweeps (${dialect}, ${blobStore})`, () => {
      let test: TestGateway;
      let account: SeededAccount;

      before(async () => {
        test = await startTestGateway(dialect, { WAGW_MEDIA_STORE: blobStore });
        account = await seedAccount(test.gateway);
      });

      after(() => test?.close());

      const stored = (sha256: string) => test.gateway.blobs.exists({ accountId: account.accountId, sha256 });
      const upload = (bytes: Buffer) =>
        test.gateway.media.ingest(Readable.from([bytes]), { accountId: account.accountId, source: 'upload' });
      const download = (id: string) =>
        test.inject({ method: 'GET', url: `/media/${id}`, headers: { authorization: `Bearer ${account.apiKey}` } });
      const expire = (id: string) =>
        test.gateway.store.db
          .updateTable('media')
          .set({ expires_at: Date.now() - 1 })
          .where('id', '=', id)
          .execute();

      it('an expired upload is removed, row marked and bytes gone, and its id answers 404', async () => {
        const media = await upload(samples.pdf(1111));
        await expire(media.id);
        // Two hours on: past the grace that keeps just-written bytes, short of the uploads' own day.
        assert.ok((await test.gateway.mediaSweeper.sweepExpired(hoursFromNow(2))) >= 1);
        assert.equal(await stored(media.sha256), false);
        const row = await test.gateway.store.db
          .selectFrom('media')
          .select('removed_at')
          .where('id', '=', media.id)
          .executeTakeFirstOrThrow();
        assert.notEqual(row.removed_at, null, 'the row stays, marked removed');
        assert.equal((await download(media.id)).statusCode, 404);
      });

      it('bytes another kept object uses stay, and so do bytes written within the hour', async () => {
        const bytes = samples.pdf(2222);
        const expiring = await upload(bytes);
        const kept = await upload(bytes);
        await expire(expiring.id);
        await test.gateway.mediaSweeper.sweepExpired(hoursFromNow(2));
        assert.deepEqual((await download(kept.id)).rawPayload, bytes, 'the other object still has its bytes');

        const fresh = await upload(samples.pdf(3333));
        await expire(fresh.id);
        await test.gateway.mediaSweeper.sweepExpired();
        assert.equal(await stored(fresh.sha256), true, 'a blob written within the grace period is left for a later sweep');
      });

      it('a blob no row names (a crash between the two writes) goes once it is old; a young one stays', async () => {
        const orphanBytes = samples.jpeg(4444);
        const sha256 = createHash('sha256').update(orphanBytes).digest('hex');
        const writer = await test.gateway.blobs.begin();
        await writer.write(orphanBytes);
        await writer.commit({ accountId: account.accountId, sha256 });
        assert.equal(await test.gateway.mediaSweeper.sweepOrphans(), 0, 'too young to judge');
        assert.ok((await test.gateway.mediaSweeper.sweepOrphans(hoursFromNow(2))) >= 1);
        assert.equal(await stored(sha256), false);
      });

      it('a write a crash cut off leaves a temporary file, which goes after the grace period', async () => {
        const writer = await test.gateway.blobs.begin();
        await writer.write(Buffer.from('half a file'));
        const incoming = path.join(test.gateway.config.media.directory, '.incoming');
        const [temporary] = fs.readdirSync(incoming);
        assert.ok(temporary !== undefined, 'the write is spooled to a local file');
        await test.gateway.mediaSweeper.sweepOrphans();
        assert.equal(fs.existsSync(path.join(incoming, temporary)), true, 'a write in progress is left alone');
        const twoHoursAgo = new Date(Date.now() - 2 * HOUR);
        fs.utimesSync(path.join(incoming, temporary), twoHoursAgo, twoHoursAgo);
        await test.gateway.mediaSweeper.sweepOrphans();
        assert.equal(fs.existsSync(path.join(incoming, temporary)), false);
        await writer.abort();
      });

      it('committing bytes that are already stored marks them as just written', async () => {
        const bytes = samples.pdf(5555);
        const first = await upload(bytes);
        const key = { accountId: account.accountId, sha256: first.sha256 };
        const before = (await test.gateway.blobs.touchedAt(key))!.getTime();
        await new Promise((resolve) => setTimeout(resolve, 20));
        await upload(bytes);
        assert.ok((await test.gateway.blobs.touchedAt(key))!.getTime() > before, 'the second commit refreshed the blob');
      });
    });
  }
}
