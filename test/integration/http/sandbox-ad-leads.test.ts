/**
 * The sandbox rehearses Click-to-WhatsApp leads (ADR 0051): a simulated ad's first message with
 * its referral, one that came as a placeholder and was resent, and one never resent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

const REFERRAL = {
  source_type: 'ad',
  source_id: '120210000000000002',
  source_url: 'https://fb.me/ad-2',
  headline: 'Free delivery',
  body: 'This week only',
  media_type: 'video',
  image_url: null,
  video_url: 'https://video.example/ad.mp4',
  thumbnail_url: null,
  ctwa_clid: 'ARAk-sandbox-click',
};

for (const dialect of dialects) {
  describe(`sandbox ad leads (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let receiver: WebhookReceiver;
    let ours: string;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      account = await seedAccount(test.gateway);
      ours = account.phones[0]!;
      receiver = await WebhookReceiver.start();
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url('/leads'), eventTypes: ['message'] });
      test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const receive = (extra: Record<string, unknown>) =>
      test.post('/sandbox/receive', { from_phone: uniquePhone(), to_phone: ours, ...extra }, account.apiKey);
    const webhookOf = async (messageId: string) => {
      const [request] = await receiver.waitForRequests(1, (request) => JSON.parse(request.body).message_id === messageId);
      return JSON.parse(request!.body);
    };
    const stored = async (messageId: string) =>
      (await test.inject({ method: 'GET', url: `/messages/${messageId}`, headers: { authorization: `Bearer ${account.apiKey}` } })).json();

    it("an ad's first message carries the referral on the answer, the webhook and GET /messages/{id}", async () => {
      const answer = await receive({ message: 'Is delivery really free?', referral: REFERRAL });
      assert.equal(answer.statusCode, 200, answer.body);
      assert.deepEqual(answer.json().referral, REFERRAL);
      assert.deepEqual((await webhookOf(answer.json().message_id)).referral, REFERRAL);
      assert.deepEqual((await stored(answer.json().message_id)).referral, REFERRAL);
    });

    it('a placeholder that is resent arrives once, as the message with its ad', async () => {
      const answer = await receive({ message: 'Resent after the ask', referral: REFERRAL, placeholder: 'resent' });
      const event = await webhookOf(answer.json().message_id);
      assert.deepEqual([event.message, event.content_kind, event.referral], ['Resent after the ask', 'text', REFERRAL]);
    });

    it('a placeholder never resent arrives as a message that says so', async () => {
      const answer = await receive({ message: 'lost on the way', referral: REFERRAL, placeholder: 'never_resent' });
      const event = await webhookOf(answer.json().message_id);
      assert.deepEqual([event.message, event.content_kind, 'referral' in event], ['', 'unavailable', false]);
      assert.equal((await stored(answer.json().message_id)).content_kind, 'unavailable');
    });

    it('a referral that names no ad is refused', async () => {
      const answer = await receive({ message: 'hi', referral: { headline: 'only a headline' } });
      assert.equal(answer.statusCode, 400, answer.body);
      assert.equal(answer.json().details, 'referral');
    });
  });
}
