import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, signatureHeaders } from '../../../src/webhooks/signing.ts';

describe('webhook signatures', () => {
  it('are exactly what the standardwebhooks library makes, and it verifies them, for any body', () => {
    for (let round = 0; round < 200; round++) {
      const secret = generateWebhookSecret();
      const id = `msg_${randomBytes(8).toString('hex')}`;
      const at = new Date(Date.now() - round * 997);
      // Bodies with multi-byte characters, newlines and nothing at all.
      const body = round % 7 === 0 ? '' : JSON.stringify({ text: `héllo ✓ 🎉\n${randomBytes(round).toString('base64')}` });
      const headers = signatureHeaders(id, at, body, [secret]);
      assert.equal(headers['webhook-signature'], new Webhook(secret).sign(id, at, body));
      assert.deepEqual(
        new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': headers['webhook-timestamp'] }) ?? {},
        body === '' ? {} : JSON.parse(body),
      );
    }
  });

  it('during a rotation, signs with every secret, and a receiver on either verifies', () => {
    const [old, fresh] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = JSON.stringify({ event: 'message' });
    const headers = signatureHeaders('msg_rotation', new Date(), body, [fresh, old]);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    for (const secret of [old, fresh]) assert.deepEqual(new Webhook(secret).verify(body, { ...headers }), { event: 'message' });
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers }));
  });
});
