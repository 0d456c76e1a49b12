import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { blobStores } from '../../support/s3-server.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`media upload and download (${dialect}, ${blobStore})`, () => {
      let test: TestGateway;
      let account: SeededAccount;
      let other: SeededAccount;

      before(async () => {
        test = await startTestGateway(dialect, {
          WAGW_MEDIA_STORE: blobStore,
          WAGW_MEDIA_MAX_IMAGE_BYTES: '4096',
          WAGW_MEDIA_MAX_STICKER_BYTES: '1024',
        });
        account = await seedAccount(test.gateway);
        other = await seedAccount(test.gateway);
      });

      after(() => test?.close());

      function upload(bytes: Buffer, contentType = 'application/octet-stream', query = '', key = account.apiKey, path = '/media') {
        return test.inject({
          method: 'POST',
          url: `${path}${query}`,
          headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
          payload: bytes,
        });
      }

      const download = (id: string, headers: Record<string, string> = {}, key = account.apiKey, path = '/media') =>
        test.inject({ method: 'GET', url: `${path}/${id}`, headers: { authorization: `Bearer ${key}`, ...headers } });

      it('an upload answers 201 with what the bytes are, and the bytes come back whole with their type and ETag', async () => {
        const response = await upload(samples.png, 'image/png', '?filename=pixel.png');
        assert.equal(response.statusCode, 201, response.body);
        const media = response.json();
        assert.match(media.media_id, /^med_/);
        assert.deepEqual(
          { ...media, media_id: undefined, expires_at: undefined },
          {
            media_id: undefined,
            kind: 'image',
            mime_type: 'image/png',
            size: samples.png.length,
            sha256: sha256(samples.png),
            filename: 'pixel.png',
            expires_at: undefined,
          },
        );
        const expiresIn = Date.parse(media.expires_at) - Date.now();
        assert.ok(
          expiresIn > 23 * 3_600_000 && expiresIn <= 24 * 3_600_000,
          `an unused upload lives 24 hours by default, not ${expiresIn} ms`,
        );
        for (const path of ['/media', '/api/media']) {
          const got = await download(media.media_id, {}, account.apiKey, path);
          assert.equal(got.statusCode, 200);
          assert.deepEqual(got.rawPayload, samples.png);
          assert.equal(got.headers['content-type'], 'image/png');
          assert.equal(got.headers.etag, `"${sha256(samples.png)}"`);
          assert.equal(got.headers['accept-ranges'], 'bytes');
          assert.equal(got.headers['x-content-type-options'], 'nosniff');
          assert.match(String(got.headers['content-disposition']), /^inline; filename="pixel.png"/);
        }
      });

      it('ranges: a slice, a suffix, an unsatisfiable one (416), and If-None-Match (304)', async () => {
        const bytes = samples.pdf(1000);
        const { media_id: id } = (await upload(bytes, 'application/pdf', '', account.apiKey, '/api/media')).json();
        const slice = await download(id, { range: 'bytes=10-19' });
        assert.equal(slice.statusCode, 206);
        assert.deepEqual(slice.rawPayload, bytes.subarray(10, 20));
        assert.equal(slice.headers['content-range'], 'bytes 10-19/1000');
        const suffix = await download(id, { range: 'bytes=-5' });
        assert.deepEqual(suffix.rawPayload, bytes.subarray(995));
        const open = await download(id, { range: 'bytes=990-' });
        assert.equal(open.headers['content-range'], 'bytes 990-999/1000');
        const outside = await download(id, { range: 'bytes=1000-1001' });
        assert.equal(outside.statusCode, 416);
        assert.equal(outside.json().error, 'range_not_satisfiable');
        assert.equal(outside.headers['content-range'], 'bytes */1000');
        const cached = await download(id, { 'if-none-match': `"${sha256(bytes)}"` });
        assert.equal(cached.statusCode, 304);
        assert.equal(cached.rawPayload.length, 0);
        const staleIfRange = await download(id, { range: 'bytes=0-0', 'if-range': '"another"' });
        assert.equal(staleIfRange.statusCode, 200, 'a range of another version is not served; the whole file is');
      });

      it('the kind comes from the bytes', async () => {
        const cases: [string, Buffer, string, string][] = [
          ['a PDF', samples.pdf(), 'document', 'application/pdf'],
          ['Ogg Opus', samples.opus(), 'voice', 'audio/ogg'],
          ['MP3', samples.mp3(), 'audio', 'audio/mpeg'],
          ['MP4', samples.mp4(), 'video', 'video/mp4'],
          ['WebP', samples.webp(1000), 'sticker', 'image/webp'],
          ['JPEG', samples.jpeg(), 'image', 'image/jpeg'],
          ['bytes without a signature', samples.text(), 'document', 'application/octet-stream'],
        ];
        for (const [what, bytes, kind, mimeType] of cases) {
          const response = await upload(bytes);
          assert.equal(response.statusCode, 201, `${what}: ${response.body}`);
          assert.deepEqual([response.json().kind, response.json().mime_type], [kind, mimeType], what);
        }
        const csv = await upload(samples.text(), 'text/csv; charset=utf-8');
        assert.equal(csv.json().mime_type, 'text/csv', 'bytes without a signature take the declared type');
        const webpImage = await upload(samples.webp(1000), 'image/webp', '?kind=image');
        assert.equal(webpImage.json().kind, 'image', 'a WebP may be sent as an image when asked');
      });

      it('a claim the bytes contradict is refused with the facts', async () => {
        const lie = await upload(samples.pdf(), 'image/png');
        assert.equal(lie.statusCode, 400);
        assert.equal(lie.json().error, 'media_type_mismatch');
        assert.deepEqual(lie.json().meta, { field: 'media.mime_type', declared: 'image/png', detected: 'application/pdf' });
        const missingSignature = await upload(samples.text(), 'application/pdf');
        assert.equal(missingSignature.json().error, 'media_type_mismatch');
        assert.equal(missingSignature.json().meta.detected, null);
        const wrongKind = await upload(samples.pdf(), 'application/pdf', '?kind=image');
        assert.equal(wrongKind.statusCode, 400);
        assert.equal(wrongKind.json().error, 'media_kind_mismatch');
        assert.deepEqual(wrongKind.json().meta, { field: 'media.kind', kind: 'image', mime_type: 'application/pdf' });
        const compressed = await test.inject({
          method: 'POST',
          url: '/media',
          headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/pdf', 'content-encoding': 'gzip' },
          payload: samples.pdf(),
        });
        assert.deepEqual(
          [compressed.statusCode, compressed.json().error, compressed.json().meta],
          [400, 'invalid_request', { field: 'Content-Encoding' }],
        );
        const untyped = await test.inject({
          method: 'POST',
          url: '/media',
          headers: { authorization: `Bearer ${account.apiKey}` },
          payload: samples.pdf(),
        });
        assert.equal(untyped.json().mime_type, 'application/pdf', 'without a Content-Type the bytes alone decide');
        const empty = await upload(Buffer.alloc(0));
        assert.equal(empty.statusCode, 400);
        assert.equal(empty.json().error, 'invalid_media');
      });

      it('a type that is not a well-formed media type is refused wherever a client gives it, naming the field', async () => {
        const text = samples.text().toString('base64');
        for (const mimeType of ['text/plain\r\nX-Injected: 1', 'text/plain\u20ac', 'text/pl\u00e4in', 'text', 'text/plain; charset']) {
          for (const path of ['/send_message', '/sandbox/receive']) {
            const body =
              path === '/send_message'
                ? { from_phone: account.phones[0], to_phone: '+447700900777', media: { data: text, mime_type: mimeType } }
                : { from_phone: '+447700900777', to_phone: account.phones[0], media: { data: text, mime_type: mimeType } };
            const refused = await test.post(path, body, account.apiKey);
            assert.deepEqual(
              [refused.statusCode, refused.json().error, refused.json().meta],
              [400, 'invalid_request', { field: 'media.mime_type', problem: 'not_a_media_type' }],
              `${path} ${JSON.stringify(mimeType)}`,
            );
          }
        }
        const malformed = await upload(samples.text(), 'text/plain; charset');
        assert.deepEqual(
          [malformed.statusCode, malformed.json().error, malformed.json().meta?.field],
          [400, 'invalid_request', 'Content-Type'],
        );
        assert.match(malformed.json().message, /^Content-Type is not a media type/);
        const withParameters = await test.post(
          '/send_message',
          { from_phone: account.phones[0], to_phone: '+447700900777', media: { data: text, mime_type: 'text/csv; charset="utf-8"' } },
          account.apiKey,
        );
        assert.deepEqual(
          [withParameters.statusCode, withParameters.json().media?.mime_type],
          [200, 'text/csv'],
          'a well-formed type with parameters is taken',
        );
      });

      it('a file stored with a type that is no valid header still downloads, as application/octet-stream', async () => {
        const { media_id: id } = (await upload(samples.text(), 'text/plain')).json();
        for (const stored of ['text/plain\r\nX-Injected: 1', 'text/plain\u20ac']) {
          await test.gateway.store.db.updateTable('media').set({ mime_type: stored }).where('id', '=', id).execute();
          const got = await download(id);
          assert.equal(got.statusCode, 200, got.body);
          assert.equal(got.headers['content-type'], 'application/octet-stream');
          assert.equal(got.headers['x-injected'], undefined);
          assert.deepEqual(got.rawPayload, samples.text());
        }
      });

      it('an upload with neither a Content-Type nor a body is a 400 saying the file is empty', async () => {
        const response = await test.inject({ method: 'POST', url: '/media', headers: { authorization: `Bearer ${account.apiKey}` } });
        assert.deepEqual(
          [response.statusCode, response.json().error, response.json().message],
          [400, 'invalid_media', 'The file is empty.'],
        );
      });

      it('each kind has its limit, named in the error', async () => {
        const image = await upload(samples.jpeg(5000));
        assert.equal(image.statusCode, 400);
        assert.deepEqual([image.json().error, image.json().meta], ['media_too_large', { kind: 'image', limit_bytes: 4096 }]);
        const sticker = await upload(samples.webp(2000));
        assert.deepEqual(sticker.json().meta, { kind: 'sticker', limit_bytes: 1024 });
        assert.equal((await upload(samples.jpeg(4096))).statusCode, 201, 'exactly the limit is allowed');
        assert.equal((await upload(samples.pdf(5000))).statusCode, 201, 'a document has a limit of its own');
      });

      it("another account's media, and an unknown id, are 404 alike", async () => {
        const { media_id: id } = (await upload(samples.png, 'image/png')).json();
        const foreign = await download(id, {}, other.apiKey);
        assert.equal(foreign.statusCode, 404);
        assert.equal(foreign.json().error, 'media_not_found');
        const unknown = await download('med_01jd0k6x9g8p1b6m3v7t2q4w5e');
        assert.deepEqual([unknown.statusCode, unknown.json().error], [404, 'media_not_found']);
        const anonymous = await test.inject({ method: 'GET', url: `/media/${id}` });
        assert.equal(anonymous.statusCode, 401);
      });

      it('the same file uploaded twice is two media objects over one stored blob', async () => {
        const bytes = samples.pdf(3000);
        const first = (await upload(bytes)).json();
        const second = (await upload(bytes, 'application/pdf', '?filename=again.pdf')).json();
        assert.notEqual(first.media_id, second.media_id);
        assert.equal(first.sha256, second.sha256);
        const blobs: string[] = [];
        for await (const blob of test.gateway.blobs.list())
          if (blob.accountId === account.accountId && blob.sha256 === first.sha256) blobs.push(blob.sha256);
        assert.equal(blobs.length, 1);
        assert.deepEqual((await download(second.media_id)).rawPayload, bytes);
      });

      it('a file name is cleaned, and the header carries it safely', async () => {
        const { media_id: id, filename } = (
          await upload(samples.pdf(), 'application/pdf', `?filename=${encodeURIComponent('../../etc/"in\r\nvoice" ü.pdf')}`)
        ).json();
        assert.equal(filename, '"invoice" ü.pdf');
        const got = await download(id);
        assert.equal(
          got.headers['content-disposition'],
          'attachment; filename="_invoice_ _.pdf"; filename*=UTF-8\'\'%22invoice%22%20%C3%BC.pdf',
        );
      });
    });
  }
}
