import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { E164 } from '../../../src/domain/phone.ts';
import { DOWNLOAD_RETRY_DELAYS_MS } from '../../../src/media/received-media.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { isEvent, startDeliveringGateway, subscribeFresh, verifiedPayload, webhookEnv } from '../../support/delivery-support.ts';
import type { JsonObject } from '../../support/json.ts';

const MINUTE = 60_000;

// An incoming file whose download fails: the message goes out at once, saying so, and a
// message.media event follows when a retry stores the file or the retries give up.
for (const dialect of dialects) {
  describe(`a failed incoming download is tried again (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let account: SeededAccount;
    let hook: { secret: string; path: string };

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_MEDIA_RECEIVE_TIMEOUT_MS: '300' }));
      receiver = await WebhookReceiver.start();
      account = await seedAccount(test.gateway);
      // Subscribed to messages only: message.media comes with them.
      hook = await subscribeFresh(test, receiver, account.accountId, ['message']);
    });

    after(async () => {
      await receiver.close();
      await test.close();
    });

    const onHook = (event: string, messageId: string) => (request: ReceivedRequest) =>
      request.path === hook.path && isEvent(event)(request) && JSON.parse(request.body).message_id === messageId;

    async function eventFor(event: string, messageId: string): Promise<JsonObject> {
      const [request] = await receiver.waitForRequests(1, onHook(event, messageId));
      return verifiedPayload(request!, hook.secret);
    }

    const pendingRow = (messageId: string) =>
      test.gateway.store.db.selectFrom('media_downloads').selectAll().where('message_id', '=', messageId).executeTakeFirst();
    const messageRow = (messageId: string) =>
      test.gateway.store.db.selectFrom('messages').select('media_id').where('id', '=', messageId).executeTakeFirstOrThrow();
    const minutesFromNow = (minutes: number) => new Date(Date.now() + minutes * MINUTE);

    function receiveLateFile(failedDownloads: number, bytes = samples.jpeg(2500)) {
      return test.post(
        '/sandbox/receive',
        {
          from_phone: uniquePhone(),
          to_phone: account.phones[0],
          message: 'a late photo',
          media: { data: bytes.toString('base64') },
          simulate_failed_downloads: failedDownloads,
        },
        account.apiKey,
      );
    }

    it('the message is reported at once as unavailable; a retry stores the file and message.media says so', async () => {
      const bytes = samples.jpeg(2600);
      const answer = await receiveLateFile(2, bytes);
      assert.equal(answer.statusCode, 200, answer.body);
      const messageId = answer.json().message_id;

      const message = await eventFor('message', messageId);
      assert.equal(message.message, 'a late photo');
      assert.deepEqual(message.media, { status: 'unavailable', kind: 'image', reason: 'download_failed', will_retry: true });
      assert.deepEqual((await pendingRow(messageId))?.attempts, 1);

      assert.equal(await test.gateway.mediaRetrier.runDue(), 0, 'nothing is due before the first delay');
      // One clock reading for the run and its check: read twice, a loaded machine's seconds between them failed the check.
      const secondRunAt = minutesFromNow(1.1);
      assert.equal(await test.gateway.mediaRetrier.runDue(secondRunAt), 1);
      const second = await pendingRow(messageId);
      assert.deepEqual([second?.attempts, second?.last_reason], [2, 'download_failed'], 'the second failure is counted');
      assert.ok(
        Number(second!.next_attempt_at) >= secondRunAt.getTime() + DOWNLOAD_RETRY_DELAYS_MS[1]!,
        'the next try waits the next delay',
      );

      assert.equal(await test.gateway.mediaRetrier.runDue(minutesFromNow(7)), 1);
      const completed = await eventFor('message.media', messageId);
      assert.deepEqual(
        { ...completed.media, id: undefined, url: undefined, signed_url: undefined, signed_url_expires_at: undefined },
        {
          status: 'available',
          id: undefined,
          kind: 'image',
          mime_type: 'image/jpeg',
          size: bytes.length,
          sha256: completed.media.sha256,
          filename: null,
          url: undefined,
          signed_url: undefined,
          signed_url_expires_at: undefined,
        },
      );
      assert.deepEqual([completed.from_phone, completed.to_phone], [message.from_phone, account.phones[0]]);
      assert.equal((await messageRow(messageId)).media_id, completed.media.id, 'the message now names its file');
      assert.equal(await pendingRow(messageId), undefined, 'the promise is kept and gone');
      const got = await test.inject({ method: 'GET', url: completed.media.url, headers: { authorization: `Bearer ${account.apiKey}` } });
      assert.deepEqual(got.rawPayload, bytes);
      const signed = await test.inject({ method: 'GET', url: completed.media.signed_url });
      assert.equal(signed.statusCode, 200, 'the signed link needs no key');
    });

    it('after the last retry the gateway gives up, and message.media says so', async () => {
      const answer = await receiveLateFile(10);
      const messageId = answer.json().message_id;
      await eventFor('message', messageId);
      let at = 0;
      for (const delay of DOWNLOAD_RETRY_DELAYS_MS) {
        at += delay + MINUTE;
        assert.equal(await test.gateway.mediaRetrier.runDue(new Date(Date.now() + at)), 1);
      }
      const given = await eventFor('message.media', messageId);
      assert.deepEqual(given.media, { status: 'unavailable', kind: 'image', reason: 'download_failed', will_retry: false });
      assert.equal(await pendingRow(messageId), undefined);
      assert.equal((await messageRow(messageId)).media_id, null);
      assert.equal(await test.gateway.mediaRetrier.runDue(new Date(Date.now() + 30 * 3_600_000)), 0, 'nothing is left to try');
    });

    it('a file the engine can no longer fetch ends its retries at the first, as media_expired', async () => {
      const message = await test.gateway.receiver.receive({
        toPhone: account.phones[0] as E164,
        fromPhone: uniquePhone() as E164,
        fromLid: null,
        text: '',
        contentKind: 'voice',
        media: {
          kind: 'voice',
          mimeType: 'audio/ogg',
          fileName: null,
          retryToken: 'not-a-file-the-sandbox-holds',
          download: () => Promise.reject(new Error('the link failed')),
        },
        engineMessageId: `GONE-${dialect}`,
        receivedAt: new Date(),
      });
      assert.equal((await eventFor('message', message.id)).media.will_retry, true);
      await test.gateway.mediaRetrier.runDue(minutesFromNow(2));
      assert.deepEqual((await eventFor('message.media', message.id)).media, {
        status: 'unavailable',
        kind: 'voice',
        reason: 'media_expired',
        will_retry: false,
      });
    });

    it('a download slower than WAGW_MEDIA_RECEIVE_TIMEOUT_MS does not hold its message back', async () => {
      const started = Date.now();
      const message = await test.gateway.receiver.receive({
        toPhone: account.phones[0] as E164,
        fromPhone: uniquePhone() as E164,
        fromLid: null,
        text: 'slow',
        contentKind: 'video',
        media: { kind: 'video', mimeType: 'video/mp4', fileName: null, retryToken: 'slow', download: () => new Promise(() => undefined) },
        engineMessageId: `SLOW-${dialect}`,
        receivedAt: new Date(),
      });
      assert.ok(Date.now() - started < 3_000, 'stored after the budget, not after the download');
      assert.deepEqual((await eventFor('message', message.id)).media, {
        status: 'unavailable',
        kind: 'video',
        reason: 'download_timed_out',
        will_retry: true,
      });
    });

    it('a file without a way to fetch it again is reported as not retried', async () => {
      const message = await test.gateway.receiver.receive({
        toPhone: account.phones[0] as E164,
        fromPhone: uniquePhone() as E164,
        fromLid: null,
        text: '',
        contentKind: 'image',
        media: { kind: 'image', mimeType: 'image/jpeg', fileName: null, retryToken: null, download: () => Promise.reject(new Error('no')) },
        engineMessageId: `NO-TOKEN-${dialect}`,
        receivedAt: new Date(),
      });
      assert.equal((await eventFor('message', message.id)).media.will_retry, false);
      assert.equal(await pendingRow(message.id), undefined);
    });

    it('simulate_failed_downloads needs media, and at most 10', async () => {
      const withoutMedia = await test.post(
        '/sandbox/receive',
        { from_phone: uniquePhone(), to_phone: account.phones[0], message: 'x', simulate_failed_downloads: 1 },
        account.apiKey,
      );
      assert.deepEqual(
        [withoutMedia.statusCode, withoutMedia.json().error, withoutMedia.json().meta.field],
        [400, 'invalid_request', 'simulate_failed_downloads'],
      );
      const tooMany = await receiveLateFile(11);
      assert.deepEqual([tooMany.statusCode, tooMany.json().meta.field], [400, 'simulate_failed_downloads']);
    });
  });
}
