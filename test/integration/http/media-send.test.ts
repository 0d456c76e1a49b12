import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { blobStores } from '../../support/s3-server.ts';
import { receivedCopyOf, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`sending and receiving media in the sandbox (${dialect}, ${blobStore})`, () => {
      let test: TestGateway;
      let sender: SeededAccount;
      let recipient: SeededAccount;

      before(async () => {
        test = await startTestGateway(dialect, { WAGW_MEDIA_STORE: blobStore });
        sender = await seedAccount(test.gateway, { plan: 'pro' });
        recipient = await seedAccount(test.gateway, { plan: 'pro' });
      });

      after(() => test?.close());

      /** The account's media rows, stored files or not, to see that nothing is stored twice. */
      async function mediaRows(accountId: string): Promise<{ source: string }[]> {
        return test.gateway.store.db.selectFrom('media').select('source').where('account_id', '=', accountId).execute();
      }

      const download = (id: string, key: string) =>
        test.inject({ method: 'GET', url: `/media/${id}`, headers: { authorization: `Bearer ${key}` } });

      /** The recipient's stored copy of the message sent as `messageId`, once stored. */
      const received = (sent: { message_id: string }, what: string) =>
        receivedCopyOf(test.gateway, sender, recipient, sent.message_id, what);

      it('an upload sent by id reaches a sandbox recipient as its own stored copy of the file', async () => {
        const bytes = samples.pdf(5000);
        const uploaded = await test.inject({
          method: 'POST',
          url: '/media?filename=inv-1042.pdf',
          headers: { authorization: `Bearer ${sender.apiKey}`, 'content-type': 'application/pdf' },
          payload: bytes,
        });
        const mediaId = uploaded.json().media_id;
        const response = await test.post(
          '/api/send_message',
          { from_phone: sender.phones[0], to_phone: recipient.phones[0], message: 'Your invoice', media: { id: mediaId } },
          sender.apiKey,
        );
        assert.equal(response.statusCode, 200, response.body);
        const sent = response.json();
        assert.equal(sent.message, 'Your invoice');
        assert.deepEqual(sent.media, {
          id: mediaId,
          kind: 'document',
          mime_type: 'application/pdf',
          size: 5000,
          sha256: sha256(bytes),
          filename: 'inv-1042.pdf',
          url: `/media/${mediaId}`,
        });

        const copy = await received(sent, 'the invoice');
        assert.equal(copy.text, 'Your invoice');
        assert.equal(copy.contentKind, 'document');
        assert.ok(copy.mediaId !== null && copy.mediaId !== mediaId, 'the recipient stores a copy of its own');
        const got = await download(copy.mediaId!, recipient.apiKey);
        assert.equal(got.statusCode, 200);
        assert.deepEqual(got.rawPayload, bytes);
        assert.match(String(got.headers['content-disposition']), /filename="inv-1042.pdf"/);
        assert.equal((await download(copy.mediaId!, sender.apiKey)).statusCode, 404, "the sender's key cannot read the recipient's copy");
      });

      it('bytes sent as data decide the kind: Ogg Opus is a voice note, and an empty caption is allowed', async () => {
        const bytes = samples.opus(3000);
        const response = await test.post(
          '/send_message',
          { from_phone: sender.phones[0], to_phone: recipient.phones[0], media: { data: bytes.toString('base64') } },
          sender.apiKey,
        );
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json().message, '');
        assert.equal(response.json().media.kind, 'voice');
        const copy = await received(response.json(), 'the voice note');
        assert.equal(copy.contentKind, 'voice');
        assert.deepEqual((await download(copy.mediaId!, recipient.apiKey)).rawPayload, bytes);
      });

      it('the simulated receive takes media too, and answers it', async () => {
        const rowsBefore = (await mediaRows(recipient.accountId)).length;
        const response = await test.post(
          '/sandbox/receive',
          {
            from_phone: '+14155550123',
            to_phone: recipient.phones[0],
            message: 'a photo',
            media: { data: samples.png.toString('base64') },
          },
          recipient.apiKey,
        );
        assert.equal(response.statusCode, 200, response.body);
        const { media } = response.json();
        assert.equal(media.kind, 'image');
        assert.equal(
          (await mediaRows(recipient.accountId)).length,
          rowsBefore + 1,
          'only the received copy is stored, not an upload beside it',
        );
        assert.deepEqual((await download(media.id, recipient.apiKey)).rawPayload, samples.png);
      });

      it('bad media requests get their codes', async () => {
        const send = (media: unknown, message?: string) =>
          test.post(
            '/send_message',
            { from_phone: sender.phones[0], to_phone: recipient.phones[0], ...(message !== undefined && { message }), media },
            sender.apiKey,
          );
        const both = await send({ id: 'med_x', data: 'AAAA' });
        assert.deepEqual([both.statusCode, both.json().error, both.json().meta], [400, 'invalid_media', { field: 'media' }]);
        const neither = await send({ filename: 'x.pdf' });
        assert.equal(neither.json().error, 'invalid_media');
        const notBase64 = await send({ data: 'not base64!' });
        assert.deepEqual([notBase64.json().error, notBase64.json().meta], ['invalid_media', { field: 'media.data' }]);
        const badKind = await send({ data: samples.png.toString('base64'), kind: 'hologram' });
        assert.deepEqual(badKind.json().meta, { field: 'media.kind' });
        const lie = await send({ data: samples.pdf().toString('base64'), mime_type: 'image/jpeg' });
        assert.equal(lie.json().error, 'media_type_mismatch');
        const foreign = (
          await test.inject({
            method: 'POST',
            url: '/media',
            headers: { authorization: `Bearer ${recipient.apiKey}`, 'content-type': 'image/png' },
            payload: samples.png,
          })
        ).json();
        const stolen = await send({ id: foreign.media_id });
        assert.deepEqual([stolen.statusCode, stolen.json().error], [404, 'media_not_found']);
        const noText = await test.post('/send_message', { from_phone: sender.phones[0], to_phone: recipient.phones[0] }, sender.apiKey);
        assert.deepEqual([noText.statusCode, noText.json().meta], [400, { field: 'message', problem: 'missing' }]);
      });

      it('an Idempotency-Key covers the file: the same file replays, another one is refused', async () => {
        const body = (bytes: Buffer) => ({
          from_phone: sender.phones[0],
          to_phone: '+14155550100',
          message: 'doc',
          media: { data: bytes.toString('base64') },
        });
        const key = { 'idempotency-key': `media-${dialect}` };
        const first = await test.post('/send_message', body(samples.pdf(1000)), sender.apiKey, key);
        assert.equal(first.statusCode, 200, first.body);
        const rowsAfterFirst = (await mediaRows(sender.accountId)).length;
        const again = await test.post('/send_message', body(samples.pdf(1000)), sender.apiKey, key);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.deepEqual(again.json(), first.json());
        assert.equal((await mediaRows(sender.accountId)).length, rowsAfterFirst, 'a replay answers before storing the file again');
        const other = await test.post('/send_message', body(samples.pdf(1001)), sender.apiKey, key);
        assert.deepEqual([other.statusCode, other.json().error], [422, 'idempotency_key_reused']);
      });
    });
  }
}
