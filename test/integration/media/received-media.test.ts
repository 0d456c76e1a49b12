import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { E164 } from '../../../src/domain/phone.ts';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { incomingMessagePayload } from '../../../src/domain/event-payloads.ts';
import { dialects } from '../../support/databases.ts';
import { blobStores } from '../../support/s3-server.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';

for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`an incoming file, stored or not, never holds its message back (${dialect}, ${blobStore})`, () => {
      let test: TestGateway;
      let account: SeededAccount;
      let sequence = 0;

      before(async () => {
        test = await startTestGateway(dialect, { WAGW_MEDIA_STORE: blobStore });
        account = await seedAccount(test.gateway);
      });

      after(() => test?.close());

      const receive = (download: () => Promise<AsyncIterable<Buffer>>, kind: 'image' | 'voice' = 'image') =>
        test.gateway.receiver.receive({
          toPhone: account.phones[0] as E164,
          fromPhone: '+14155550123' as E164,
          fromLid: null,
          text: 'see this',
          contentKind: kind,
          media: { kind, mimeType: 'image/jpeg', fileName: null, download, retryToken: null },
          engineMessageId: `ENGINE-MEDIA-${dialect}-${++sequence}`,
          receivedAt: new Date(),
        });

      it('a downloaded file is stored in the account and named by the message', async () => {
        const message = await receive(async () => Readable.from([samples.jpeg(3000)]));
        assert.equal(message.contentKind, 'image');
        assert.ok(message.mediaId !== null);
        const got = await test.inject({
          method: 'GET',
          url: `/media/${message.mediaId}`,
          headers: { authorization: `Bearer ${account.apiKey}` },
        });
        assert.deepEqual(got.rawPayload, samples.jpeg(3000));
        const media = await test.gateway.media.find(account.accountId, message.mediaId!);
        const expiresIn = media.expiresAt!.getTime() - Date.now();
        assert.ok(expiresIn > 29 * 86_400_000 && expiresIn <= 30 * 86_400_000, 'received media is kept 30 days by default');
      });

      it('a failed download stores the message without its file, and says why in the webhook payload', async () => {
        const message = await receive(async () => {
          throw new Error('the CDN link has expired');
        });
        assert.equal(message.text, 'see this');
        assert.equal(message.mediaId, null);
        const page = await test.gateway.history.page(accountScope(account.accountId), { limit: 5 });
        assert.ok(
          page.messages.some((stored) => stored.id === message.id),
          'the message is stored',
        );
        const payload = incomingMessagePayload(message, { kind: 'image', unavailable: 'download_failed', willRetry: false }) as unknown as {
          media: unknown;
          data: { media: unknown };
        };
        assert.deepEqual(payload.media, { status: 'unavailable', kind: 'image', reason: 'download_failed', will_retry: false });
        assert.deepEqual(payload.data.media, payload.media);
      });

      it('bytes that break a limit are refused, and the message still arrives', async () => {
        const message = await receive(async () => Readable.from([samples.pdf(200)]), 'voice');
        assert.ok(message.mediaId !== null, 'a file whose bytes contradict the claimed kind is kept as what the bytes are');
        const media = await test.gateway.media.find(account.accountId, message.mediaId!);
        assert.equal(media.kind, 'document');
      });
    });
  }
}
