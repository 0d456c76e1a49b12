import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { AppError, type ErrorCode } from '../../../src/domain/errors.ts';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { startServer } from '../../../src/server.ts';
import { createGateway, createLogger } from '../../../src/main.ts';
import { WebhookHttpClient } from '../../../src/webhooks/webhook-http.ts';
import { createTestDatabase, dialects } from '../../support/databases.ts';
import { collectingSink, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

/**
 * WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS opens one host:port each and nothing beside it; the older
 * WAGW_WEBHOOK_ALLOW_PRIVATE still works and is warned about at every start.
 */
const ALLOW_PRIVATE = { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' };
const TEST_SECRET_KEY = process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16);

function rejectsWith(code: ErrorCode) {
  return (error: unknown) => {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  };
}

describe('the private allow-list opens exactly the listed host:port', () => {
  let receiver: WebhookReceiver;
  let neighbour: WebhookReceiver;

  before(async () => {
    [receiver, neighbour] = await Promise.all([WebhookReceiver.start(), WebhookReceiver.start()]);
  });
  after(async () => {
    await Promise.all([receiver?.close(), neighbour?.close()]);
  });

  it('a listed address and port is reached; another port on the same host, and the same port by another address, are blocked', async () => {
    const client = new WebhookHttpClient({
      timeoutMs: 2_000,
      addressPolicy: { everything: false, hosts: [{ host: '127.0.0.1', port: receiver.port }] },
      userAgent: 'x',
    });
    try {
      const listed = await client.post(`http://127.0.0.1:${receiver.port}/listed`, '{}', {});
      assert.equal(listed.statusCode, 200, JSON.stringify(listed));
      const otherPort = await client.post(`http://127.0.0.1:${neighbour.port}/neighbour`, '{}', {});
      assert.equal(otherPort.error, 'blocked_address', JSON.stringify(otherPort));
      const otherAddress = await client.post(`http://127.0.0.2:${receiver.port}/other-address`, '{}', {});
      assert.equal(otherAddress.error, 'blocked_address', JSON.stringify(otherAddress));
      await receiver.waitForRequests(1);
      assert.deepEqual(
        receiver.requests.map((request) => request.path),
        ['/listed'],
      );
      assert.equal(neighbour.requests.length, 0, 'the neighbouring service on the same host saw nothing');
    } finally {
      client.close();
    }
  });

  it('a listed name is matched by the URL host and port, not by what else resolves to the same address', async () => {
    const client = new WebhookHttpClient({
      timeoutMs: 2_000,
      addressPolicy: { everything: false, hosts: [{ host: 'localhost', port: neighbour.port }] },
      userAgent: 'x',
    });
    try {
      const byName = await client.post(`http://localhost:${neighbour.port}/by-name`, '{}', {});
      assert.equal(byName.statusCode, 200, JSON.stringify(byName));
      const byAddress = await client.post(`http://127.0.0.1:${neighbour.port}/by-address`, '{}', {});
      assert.equal(byAddress.error, 'blocked_address', JSON.stringify(byAddress));
    } finally {
      client.close();
    }
  });
});

for (const dialect of dialects) {
  describe(`saving a webhook under the private allow-list (${dialect})`, () => {
    let test: TestGateway;
    let accountId: string;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:4000,[::1]:4000' });
      accountId = (await seedAccount(test.gateway, { numbers: 0 })).accountId;
    });
    after(() => test?.close());

    it('a listed host:port is accepted; its other ports and other private hosts are refused', async () => {
      for (const url of ['http://127.0.0.1:4000/hook', 'http://[::1]:4000/hook']) {
        const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(accountId), { url });
        assert.equal(webhook.url, url);
      }
      for (const url of [
        'http://127.0.0.1:4001/hook',
        'http://127.0.0.1/hook',
        'http://10.0.0.1:4000/hook',
        'http://[::7f00:1]:4000/hook',
      ]) {
        await assert.rejects(
          test.gateway.webhooks.createWebhook(accountScope(accountId), { url }),
          rejectsWith('webhook_url_blocked'),
          url,
        );
      }
    });
  });
}

describe('WAGW_WEBHOOK_ALLOW_PRIVATE, the old switch', () => {
  it('still works, and the server warns at start that it opens every private address, naming the allow-list', async () => {
    const database = await createTestDatabase('sqlite');
    const lines: string[] = [];
    const config = loadConfig({
      DATABASE_URL: database.url,
      PORT: '0',
      LOG_LEVEL: 'warn',
      WAGW_SECRET_KEY: TEST_SECRET_KEY,
      ...ALLOW_PRIVATE,
    });
    const gateway = await createGateway(config, createLogger(config, collectingSink(lines)));
    const server = await startServer(gateway);
    try {
      const warning = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .find((line) => /WAGW_WEBHOOK_ALLOW_PRIVATE/.test(line.msg));
      assert.ok(warning !== undefined, lines.join(''));
      assert.equal(warning.level, 40);
      assert.match(warning.msg, /WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS/);
    } finally {
      await server.stop();
      await database.drop();
    }
  });

  it('the allow-list is read strictly: a port is required and a bad entry is a configuration error', () => {
    assert.deepEqual(
      loadConfig({ WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: ' 127.0.0.1:4000 , [::1]:4000,Receiver.internal:8080' }).webhooks
        .allowedPrivateHosts,
      [
        { host: '127.0.0.1', port: 4000 },
        { host: '::1', port: 4000 },
        { host: 'receiver.internal', port: 8080 },
      ],
    );
    for (const bad of ['127.0.0.1', '127.0.0.1:0', '127.0.0.1:70000', 'http://127.0.0.1:4000', '::1:4000']) {
      assert.throws(() => loadConfig({ WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: bad }), /WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS/, bad);
    }
  });
});
