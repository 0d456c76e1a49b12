import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { blobStores } from '../../support/s3-server.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';

for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`signed media links and absolute URLs (${dialect}, ${blobStore})`, () => {
      let test: TestGateway;
      let account: SeededAccount;
      let other: SeededAccount;

      before(async () => {
        test = await startTestGateway(dialect, {
          WAGW_MEDIA_STORE: blobStore,
          WAGW_PUBLIC_URL: 'https://wa.example.com/',
          WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9',
        });
        account = await seedAccount(test.gateway);
        other = await seedAccount(test.gateway);
      });

      after(() => test?.close());

      const upload = async (key = account.apiKey) =>
        (
          await test.inject({
            method: 'POST',
            url: '/media',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/pdf' },
            payload: samples.pdf(900),
          })
        ).json();
      /** The path and query of a link, to ask this gateway for it. */
      const local = (url: string) => url.replace('https://wa.example.com', '');

      it('a link opens its file without a key until it expires, and an altered one opens nothing', async () => {
        const { media_id: id } = await upload();
        const made = await test.post(`/media/${id}/link`, { expires_in_seconds: 60 }, account.apiKey);
        assert.equal(made.statusCode, 200, made.body);
        const { url, expires_at: expiresAt } = made.json();
        assert.match(url, new RegExp(`^https://wa\\.example\\.com/media/${id}\\?expires=\\d+&signature=[0-9a-f]{64}$`));
        assert.ok(Math.abs(Date.parse(expiresAt) - (Date.now() + 60_000)) < 2_000);
        const opened = await test.inject({ method: 'GET', url: local(url) });
        assert.equal(opened.statusCode, 200);
        assert.deepEqual(opened.rawPayload, samples.pdf(900));

        const tampered = [
          local(url).replace(/signature=([0-9a-f])/, (_all, first: string) => `signature=${first === '0' ? '1' : '0'}`),
          local(url).replace(/expires=\d+/, `expires=${Math.floor(Date.now() / 1000) + 999_999}`),
          local(url).replace(`/media/${id}`, `/media/${(await upload()).media_id}`),
          local(test.gateway.mediaLinks.sign(id, new Date(Date.now() - 1_000)).url),
          `/media/${id}?expires=${Math.floor(Date.now() / 1000) + 60}`,
        ];
        for (const attempt of tampered) {
          const refused = await test.inject({ method: 'GET', url: attempt });
          assert.deepEqual([refused.statusCode, refused.json().error], [404, 'media_not_found'], attempt);
        }
        const unsigned = await test.inject({ method: 'GET', url: `/media/${id}` });
        assert.equal(unsigned.statusCode, 401, 'without a signature, a key is needed');
      });

      it('a signed link is logged with its path but never its signature, however the query spells it', async () => {
        const { media_id: id } = await upload();
        const { url } = (await test.post(`/media/${id}/link`, { expires_in_seconds: 60 }, account.apiKey)).json();
        const signature = /signature=([0-9a-f]{64})/.exec(url)![1]!;
        const spellings = [
          local(url),
          local(url).replace('/media/', '/api/media/'),
          local(url).replace('signature=', '%73ignature='),
          `${local(url)}&x=1`,
          local(url).replace(`/media/${id}`, `/media/${id}/nothing`),
          local(url).replace(`/media/${id}`, `/media/${id}%`),
        ];
        const before = test.logLines.length;
        for (const path of spellings) await test.inject({ method: 'GET', url: path });
        const lines = test.logLines.slice(before).filter((line) => line.includes('"msg":"request"'));
        assert.equal(lines.length, spellings.length, 'every request was logged');
        for (const line of lines) {
          assert.ok(!line.includes(signature), `the signature is not in the log: ${line}`);
          assert.ok(line.includes(`/media/${id}`), `the path is: ${line}`);
        }
        assert.match(lines[0]!, new RegExp(`"url":"/media/${id}\\?expires=\\d+&signature=\\[redacted\\]"`));
      });

      it("another account cannot make a link to a file it does not own, and a link ends with the file's retention", async () => {
        const { media_id: id } = await upload();
        const foreign = await test.post(`/api/media/${id}/link`, {}, other.apiKey);
        assert.deepEqual([foreign.statusCode, foreign.json().error], [404, 'media_not_found']);
        const long = (await test.post(`/media/${id}/link`, { expires_in_seconds: 7 * 86_400 }, account.apiKey)).json();
        const media = await test.gateway.media.find(account.accountId, id);
        assert.ok(Date.parse(long.expires_at) <= media.expiresAt!.getTime(), 'no link outlives its file');
        const tooLong = await test.post(`/media/${id}/link`, { expires_in_seconds: 7 * 86_400 + 1 }, account.apiKey);
        assert.equal(tooLong.statusCode, 400);
      });

      it('a received file reaches the webhook with an absolute url and a signed link', async () => {
        await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
          url: 'http://127.0.0.1:9/hook',
          eventTypes: ['message'],
        });
        const received = await test.post(
          '/sandbox/receive',
          { from_phone: '+14155550123', to_phone: account.phones[0], message: 'photo', media: { data: samples.png.toString('base64') } },
          account.apiKey,
        );
        assert.equal(received.statusCode, 200, received.body);
        const mediaId = received.json().media.id;
        assert.equal(received.json().media.url, `https://wa.example.com/media/${mediaId}`);
        const event = await test.gateway.store.db
          .selectFrom('webhook_events')
          .select('payload')
          .where('account_id', '=', account.accountId)
          .orderBy('created_at', 'desc')
          .executeTakeFirstOrThrow();
        const payload = JSON.parse(event.payload);
        assert.equal(payload.media.url, `https://wa.example.com/media/${mediaId}`);
        assert.deepEqual(payload.data.media, payload.media);
        const opened = await test.inject({ method: 'GET', url: local(payload.media.signed_url) });
        assert.deepEqual(opened.rawPayload, samples.png);
        const lifetime = Date.parse(payload.media.signed_url_expires_at) - Date.now();
        assert.ok(lifetime > 23 * 3_600_000 && lifetime <= 24 * 3_600_000, 'signed links in webhooks last 24 hours by default');
      });
    });
  }
}
