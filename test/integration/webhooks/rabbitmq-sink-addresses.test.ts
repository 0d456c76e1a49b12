import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { AppError } from '../../../src/domain/errors.ts';
import { STRICT_ADDRESS_POLICY } from '../../../src/webhooks/address-guard.ts';
import { AmqpPublisher } from '../../../src/webhooks/amqp-publisher.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * A RabbitMQ sink is an outbound connection like a webhook's, so the SSRF guard holds for it
 * twice: when its amqp(s):// URL is saved, and when the publisher dials the broker (a name may
 * resolve elsewhere later than it did when saved).
 */
const PRIVATE_BROKERS = [
  'amqp://127.0.0.1',
  'amqp://guest:guest@10.0.0.1:5672/',
  'amqps://169.254.169.254',
  'amqp://[::1]:5672',
  'amqps://localhost/vhost',
  'amqp://[::ffff:192.168.1.1]',
];

const TARGET = { exchange: 'wagw', routingKey: '{event}' };

for (const dialect of dialects) {
  describe(`a RabbitMQ sink's broker address passes the SSRF guard when saved (${dialect})`, () => {
    let gateway: TestGateway;
    let accountId: string;

    before(async () => {
      gateway = await startTestGateway(dialect, { WAGW_WEBHOOKS_PER_ACCOUNT: '100' });
      accountId = (await seedAccount(gateway.gateway, { numbers: 0 })).accountId;
    });
    after(async () => {
      await gateway?.close();
    });

    for (const url of PRIVATE_BROKERS) {
      it(`${url} is refused with webhook_url_blocked, naming the AMQP port, and nothing is stored`, async () => {
        const scope = accountScope(accountId);
        const storedBefore = (await gateway.gateway.webhooks.listWebhooks(scope)).length;
        await assert.rejects(gateway.gateway.webhooks.createWebhook(scope, { url, rabbitmq: TARGET }), (error: unknown) => {
          assert.ok(error instanceof AppError && error.code === 'webhook_url_blocked', String(error));
          const expectedPort = new URL(url).port || (url.startsWith('amqps:') ? '5671' : '5672');
          assert.equal(String((error.meta as { port: number }).port), expectedPort);
          assert.doesNotMatch(error.message, /guest:guest/, 'the password is never echoed');
          return true;
        });
        assert.equal((await gateway.gateway.webhooks.listWebhooks(scope)).length, storedBefore);
      });
    }

    it('the same refusal holds when an existing sink is moved to a private broker', async () => {
      const scope = accountScope(accountId);
      const { webhook } = await gateway.gateway.webhooks.createWebhook(scope, { url: 'amqp://8.8.8.8', rabbitmq: TARGET });
      await assert.rejects(
        gateway.gateway.webhooks.updateWebhook(scope, webhook.id, { url: 'amqp://10.1.2.3' }),
        (error: unknown) => error instanceof AppError && error.code === 'webhook_url_blocked',
      );
      assert.equal((await gateway.gateway.webhooks.getWebhook(scope, webhook.id)).url, 'amqp://8.8.8.8');
    });
  });
}

describe('the publisher dials a broker only at an address the policy allows', () => {
  let listener: net.Server;
  let port: number;
  let connections = 0;

  before(async () => {
    // A loopback listener that counts every connection: a guarded publish must never reach it.
    listener = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
  });
  after(async () => {
    await new Promise((resolve) => listener.close(resolve));
  });

  for (const host of ['127.0.0.1', 'localhost']) {
    it(`a publish to amqp://${host}:<port> fails as blocked_address without a connection`, async () => {
      const publisher = new AmqpPublisher({ timeoutMs: 60_000, addressPolicy: STRICT_ADDRESS_POLICY });
      try {
        const result = await publisher.publish(
          { url: `amqp://${host}:${port}`, exchange: '', routingKey: 'events', body: '{}', messageId: 'evt_1', headers: {} },
          'dlv_1',
        );
        assert.equal(result.error, 'blocked_address', JSON.stringify(result));
        assert.equal(result.brokerAnswered, false);
        assert.equal(connections, 0, 'the guard refused before dialling');
      } finally {
        publisher.close();
      }
    });
  }

  it('with the listener allowed by host:port, the same publish does dial it (so the test above can fail)', async () => {
    const publisher = new AmqpPublisher({ timeoutMs: 60_000, addressPolicy: { everything: false, hosts: [{ host: '127.0.0.1', port }] } });
    try {
      const result = await publisher.publish(
        { url: `amqp://127.0.0.1:${port}`, exchange: '', routingKey: 'events', body: '{}', messageId: 'evt_2', headers: {} },
        'dlv_2',
      );
      assert.notEqual(result.error, null, 'the listener is no broker');
      assert.notEqual(result.error, 'blocked_address', JSON.stringify(result));
      assert.ok(connections >= 1, 'the allowed address was dialled');
    } finally {
      publisher.close();
    }
  });
});
