import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createTestDatabase, dialects, type TestDatabase } from '../support/databases.ts';
import type { SeededAccount } from '../support/gateway.ts';
import { samples } from '../support/media-samples.ts';
import { blobStores, startS3Server, type TestS3Server } from '../support/s3-server.ts';
import { loadConfig } from '../../src/config.ts';
import type { BlobStore } from '../../src/media/blob-store.ts';
import { openBlobStore } from '../../src/media/open-blob-store.ts';
import { killAllServerProcesses, openDatabase, seedDatabase, startServerProcess, withGateway } from './server-process.ts';
import { ignoreCutOff } from '../support/ignore.ts';

const SECRET_KEY = '7e57'.repeat(16);
const HOUR = 3_600_000;

/** The temporary files of unfinished writes, which both stores spool to the media directory. */
function spooled(directory: string): string[] {
  const incomingDirectory = path.join(directory, '.incoming');
  return fs.existsSync(incomingDirectory) ? fs.readdirSync(incomingDirectory) : [];
}

for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`media survives kill -9 (${dialect}, ${blobStore})`, () => {
      let database: TestDatabase;
      let account: SeededAccount;
      let mediaDirectory: string;
      let env: Record<string, string>;
      let s3: TestS3Server | undefined;
      /** The store as the gateway sees it, opened by the test on the same settings. */
      let blobs: BlobStore;

      before(async () => {
        database = await createTestDatabase(dialect);
        account = await seedDatabase(database.url);
        mediaDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-media-crash-'));
        s3 = blobStore === 's3' ? await startS3Server() : undefined;
        env = { WAGW_MEDIA_DIR: mediaDirectory, WAGW_SECRET_KEY: SECRET_KEY, ...s3?.env };
        blobs = await openBlobStore(loadConfig(env).media);
      });

      after(async () => {
        await killAllServerProcesses();
        await database.drop();
        await blobs?.close();
        await s3?.close();
        fs.rmSync(mediaDirectory, { recursive: true, force: true });
      });

      async function storedBlobs(): Promise<string[]> {
        const listed: string[] = [];
        for await (const blob of blobs.list()) listed.push(`${blob.accountId}/${blob.sha256}`);
        return listed;
      }

      it('an upload cut off by kill -9 leaves no row and no blob, and its temporary file is swept', async () => {
        const server = await startServerProcess(database.url, env);
        const chunk = Buffer.alloc(64 * 1024, 0x2e);
        const upload = http.request({
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/media',
          headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/pdf' },
        });
        upload.on('error', ignoreCutOff);
        upload.write(samples.pdf(chunk.length));
        // Stream until the gateway has written part of the file to disk, then kill it mid-write.
        for (let sent = 0; spooled(mediaDirectory).length === 0 || sent < 8; sent++) {
          upload.write(chunk);
          await delay(20);
          if (sent > 500) assert.fail('the upload never reached the disk');
        }
        server.signalGroup('SIGKILL');
        await server.exited;
        upload.destroy();

        const store = openDatabase(database.url);
        try {
          const rows = await store.db.selectFrom('media').select('id').where('account_id', '=', account.accountId).execute();
          assert.deepEqual(rows, [], 'no media row names the cut-off upload');
        } finally {
          await store.close();
        }
        assert.deepEqual(await storedBlobs(), [], 'no blob was published');
        const incoming = spooled(mediaDirectory);
        assert.equal(incoming.length, 1, 'the unfinished write is a temporary file');

        await withGateway(
          database.url,
          async (gateway) => {
            const file = path.join(mediaDirectory, '.incoming', incoming[0]!);
            fs.utimesSync(file, new Date(Date.now() - 2 * HOUR), new Date(Date.now() - 2 * HOUR));
            await gateway.mediaSweeper.sweepOrphans();
          },
          env,
        );
        assert.deepEqual(spooled(mediaDirectory), [], 'the sweep removed it');
      });

      it('every file answered 200 or 201 before kill -9 is still served whole after the restart', async () => {
        const server = await startServerProcess(database.url, env);
        const files = Array.from({ length: 8 }, (_unused, index) => samples.pdf(30_000 + index));
        const answered: { id: string; bytes: Buffer }[] = [];
        let killed = false;
        await Promise.all(
          files.map(
            (bytes) =>
              new Promise<void>((resolve) => {
                const request = http.request(
                  {
                    host: '127.0.0.1',
                    port: server.port,
                    method: 'POST',
                    path: '/sandbox/receive',
                    headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
                  },
                  (response) => {
                    const chunks: Buffer[] = [];
                    response.on('data', (data: Buffer) => chunks.push(data));
                    response.on('end', () => {
                      if (response.statusCode === 200) answered.push({ id: JSON.parse(Buffer.concat(chunks).toString()).media.id, bytes });
                      if (!killed) {
                        killed = true;
                        server.signalGroup('SIGKILL');
                      }
                      resolve();
                    });
                    response.on('error', () => resolve());
                  },
                );
                request.on('error', () => resolve());
                request.end(
                  JSON.stringify({
                    from_phone: '+14155550123',
                    to_phone: account.phones[0],
                    message: 'a file',
                    media: { data: bytes.toString('base64') },
                  }),
                );
              }),
          ),
        );
        await server.exited;
        assert.ok(answered.length >= 1, 'at least the first answer arrived');

        const restarted = await startServerProcess(database.url, env);
        for (const { id, bytes } of answered) {
          const body = await new Promise<{ status: number; bytes: Buffer }>((resolve, reject) => {
            http
              .get(
                { host: '127.0.0.1', port: restarted.port, path: `/media/${id}`, headers: { authorization: `Bearer ${account.apiKey}` } },
                (response) => {
                  const chunks: Buffer[] = [];
                  response.on('data', (data: Buffer) => chunks.push(data));
                  response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
                },
              )
              .on('error', reject);
          });
          assert.equal(body.status, 200, `media ${id} answered before the crash is served after it`);
          assert.deepEqual(body.bytes, bytes);
        }
        // And no message anywhere names a file whose bytes are gone.
        const store = openDatabase(database.url);
        try {
          const named = await store.db
            .selectFrom('messages')
            .innerJoin('media', 'media.id', 'messages.media_id')
            .select(['media.account_id', 'media.sha256'])
            .where('messages.account_id', '=', account.accountId)
            .execute();
          for (const row of named)
            assert.ok(
              await blobs.exists({ accountId: row.account_id, sha256: row.sha256 }),
              `the blob of a stored message exists: ${row.sha256}`,
            );
        } finally {
          await store.close();
        }
      });
    });
  }
}
