import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { receivedMessage, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';
import { blobStores } from '../../support/s3-server.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every kind, as the bytes decide it without a claim. */
const KINDS: { kind: string; mimeType: string; bytes: Buffer; file: string }[] = [
  { kind: 'image', mimeType: 'image/jpeg', bytes: samples.jpeg(3100), file: 'photo.jpg' },
  { kind: 'image', mimeType: 'image/png', bytes: samples.png, file: 'pixel.png' },
  { kind: 'video', mimeType: 'video/mp4', bytes: samples.mp4(3200), file: 'clip.mp4' },
  { kind: 'voice', mimeType: 'audio/ogg', bytes: samples.opus(3300), file: 'note.ogg' },
  { kind: 'audio', mimeType: 'audio/mpeg', bytes: samples.mp3(3400), file: 'song.mp3' },
  { kind: 'document', mimeType: 'application/pdf', bytes: samples.pdf(3500), file: 'invoice.pdf' },
  { kind: 'sticker', mimeType: 'image/webp', bytes: samples.webp(900), file: 'sticker.webp' },
];
const SOURCES = ['id', 'data', 'url'] as const;

// Each kind, from each of a send's three sources, reaches a sandbox recipient as the same file.
for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`every kind by upload, data and URL (${dialect}, ${blobStore})`, () => {
      let files: http.Server;
      let filesPort: number;
      let test: TestGateway;
      let sender: SeededAccount;
      let recipient: SeededAccount;

      before(async () => {
        files = http.createServer((request, response) => {
          const sample = KINDS.find((candidate) => request.url === `/${candidate.file}`);
          if (sample === undefined) return response.writeHead(404).end();
          response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(sample.bytes);
        });
        await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
        filesPort = (files.address() as AddressInfo).port;
        test = await startTestGateway(dialect, {
          WAGW_MEDIA_STORE: blobStore,
          WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${filesPort}`,
        });
        sender = await seedAccount(test.gateway, { plan: 'pro' });
        recipient = await seedAccount(test.gateway, { plan: 'pro' });
      });

      after(async () => {
        await test?.close();
        files?.close();
      });

      async function mediaFrom(source: (typeof SOURCES)[number], sample: (typeof KINDS)[number]): Promise<Record<string, string>> {
        if (source === 'data') return { data: sample.bytes.toString('base64'), filename: sample.file };
        if (source === 'url') return { url: `http://127.0.0.1:${filesPort}/${sample.file}` };
        const uploaded = await test.inject({
          method: 'POST',
          url: `/media?filename=${sample.file}`,
          headers: { authorization: `Bearer ${sender.apiKey}`, 'content-type': 'application/octet-stream' },
          payload: sample.bytes,
        });
        assert.equal(uploaded.statusCode, 201, uploaded.body);
        return { id: uploaded.json().media_id };
      }

      for (const sample of KINDS) {
        it(`${sample.kind} (${sample.mimeType}) by ${SOURCES.join(', ')}`, async () => {
          for (const source of SOURCES) {
            const response = await test.post(
              '/send_message',
              {
                from_phone: sender.phones[0],
                to_phone: recipient.phones[0],
                // Unique to this sample and source: two samples are images, and each test reads its own.
                message: `${sample.file} by ${source}`,
                media: await mediaFrom(source, sample),
              },
              sender.apiKey,
            );
            assert.equal(response.statusCode, 200, `${source}: ${response.body}`);
            const sent = response.json().media;
            assert.deepEqual(
              [sent.kind, sent.mime_type, sent.size, sent.sha256, sent.filename],
              [sample.kind, sample.mimeType, sample.bytes.length, sha256(sample.bytes), sample.file],
              source,
            );

            const text = `${sample.file} by ${source}`;
            const received = await receivedMessage(test.gateway, recipient.accountId, (message) => message.text === text, text);
            assert.deepEqual([received.text, received.contentKind], [text, sample.kind], source);
            const got = await test.inject({
              method: 'GET',
              url: `/media/${received.mediaId}`,
              headers: { authorization: `Bearer ${recipient.apiKey}` },
            });
            assert.deepEqual([got.statusCode, got.headers['content-type']], [200, sample.mimeType], source);
            assert.deepEqual(got.rawPayload, sample.bytes, `${source}: the recipient holds the same bytes`);
          }
        });
      }
    });
  }
}
