import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { AppError, type ErrorCode } from '../../../src/domain/errors.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { BlockedAddressError, guardedLookup, isBlockedAddress, STRICT_ADDRESS_POLICY } from '../../../src/webhooks/address-guard.ts';
import { WebhookHttpClient } from '../../../src/webhooks/webhook-http.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { waitFor } from '../../process/raw-http.ts';

/**
 * Every address a webhook must not reach by default: loopback, the private ranges, cloud
 * metadata, CGNAT, "this host", multicast, broadcast, documentation, IPv6 link-local and
 * unique-local, and IPv6 spellings that embed a loopback IPv4 address.
 */
const BLOCKED_ADDRESSES = [
  '127.0.0.1',
  '::1',
  '10.0.0.1',
  '172.16.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '::ffff:127.0.0.1',
  '100.64.0.1',
  '0.0.0.0',
  '224.0.0.1',
  '255.255.255.255',
  '192.0.2.1',
  'fe80::1',
  'fc00::1',
  '64:ff9b::7f00:1',
  // IPv4-compatible IPv6 (deprecated, inside ::/8): loopback, cloud metadata and a private
  // address, as URL parsers store http://[::127.0.0.1]/ and its kind.
  '::7f00:1',
  '::127.0.0.1',
  '::a9fe:a9fe',
  '::c0a8:101',
  // The rest of ::/8 and other IPv6 outside 2000::/3.
  '::',
  '::2',
  '100::1',
  '5f00::1',
  '4000::1',
  // Special blocks inside 2000::/3: documentation, 6to4 and Teredo (which embed IPv4), ORCHIDv2.
  '2001:db8::1',
  '3fff::1',
  '2002:7f00:1::1',
  '2001::7f00:1',
  '2001:20::1',
  // IPv4 special-purpose ranges beyond the private ones.
  '198.18.0.1',
  '198.51.100.1',
  '203.0.113.1',
  '192.0.0.1',
  '240.0.0.1',
];
/** The same hosts as a URL would carry them, plus a name that resolves to loopback. */
const BLOCKED_HOSTS = [...BLOCKED_ADDRESSES.map((address) => (address.includes(':') ? `[${address}]` : address)), 'localhost'];
const PUBLIC_ADDRESSES = ['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2001:4860:4860::8888', '2a00:1450::1'];

const ALLOW_PRIVATE = { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' };
const TEST_SECRET_KEY = process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16);
const DELIVERY_TIMEOUT_MS = 10_000;

function rejectsWith(code: ErrorCode) {
  return (error: unknown) => {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  };
}

describe('which addresses the SSRF guard blocks', () => {
  for (const address of BLOCKED_ADDRESSES) {
    it(`${address} is blocked`, () => {
      assert.equal(isBlockedAddress(address), true);
    });
  }

  it('an address is judged the same with URL brackets or an IPv6 zone', () => {
    assert.equal(isBlockedAddress('[::1]'), true);
    assert.equal(isBlockedAddress('fe80::1%eth0'), true);
    assert.equal(isBlockedAddress('[2606:4700:4700::1111]'), false);
  });

  it('globally routable addresses are allowed, an IPv4-mapped one judged by its IPv4 address', () => {
    for (const address of PUBLIC_ADDRESSES) assert.equal(isBlockedAddress(address), false, address);
  });

  it('something that is not an address at all is blocked rather than waved through', () => {
    for (const input of ['', 'example.com', '127.0.0.1.nip.io', '1.2.3.4.5'])
      assert.equal(isBlockedAddress(input), true, JSON.stringify(input));
  });
});

describe('the guarded DNS lookup judges the addresses a name resolves to', () => {
  const lookup = (allowPrivateAddresses: boolean, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>((resolve) =>
      guardedLookup({ everything: allowPrivateAddresses, hosts: [] }, 80, 'localhost')('localhost', { all }, (error, address) =>
        resolve({ error, address }),
      ),
    );

  it('a name that resolves only to loopback fails the lookup with BlockedAddressError', async () => {
    for (const all of [true, false]) {
      const { error } = await lookup(false, all);
      assert.ok(error instanceof BlockedAddressError, `all: ${all}: ${String(error)}`);
      assert.match(error.message, /localhost .*127\.0\.0\.1/);
    }
  });

  it('with private addresses allowed the same name resolves to its loopback address', async () => {
    const single = await lookup(true, false);
    assert.equal(single.error, null);
    assert.equal(single.address, '127.0.0.1');
    const every = await lookup(true, true);
    assert.equal(every.error, null);
    assert.ok(Array.isArray(every.address) && every.address.some((entry) => entry.address === '127.0.0.1'), JSON.stringify(every.address));
  });
});

for (const dialect of dialects) {
  describe(`saving a webhook URL checks where it leads (${dialect})`, () => {
    let guarded: TestGateway;
    let permissive: TestGateway;
    let guardedAccountId: string;
    let permissiveAccountId: string;

    before(async () => {
      // Each blocked host below makes one webhook in one account, more than the default cap.
      const manyWebhooks = { WAGW_WEBHOOKS_PER_ACCOUNT: '1000' };
      [guarded, permissive] = await Promise.all([
        startTestGateway(dialect, manyWebhooks),
        startTestGateway(dialect, { ...ALLOW_PRIVATE, ...manyWebhooks }),
      ]);
      [guardedAccountId, permissiveAccountId] = await Promise.all([
        seedAccount(guarded.gateway, { numbers: 0 }).then((seeded) => seeded.accountId),
        seedAccount(permissive.gateway, { numbers: 0 }).then((seeded) => seeded.accountId),
      ]);
    });
    after(async () => {
      await Promise.all([guarded?.close(), permissive?.close()]);
    });

    for (const host of BLOCKED_HOSTS) {
      it(`a webhook on ${host} is refused with webhook_url_blocked by default and accepted with WAGW_WEBHOOK_ALLOW_PRIVATE=true`, async () => {
        const url = `http://${host}:8080/x`;
        const storedBefore = (await guarded.gateway.webhooks.listWebhooks(accountScope(guardedAccountId))).length;
        await assert.rejects(
          guarded.gateway.webhooks.createWebhook(accountScope(guardedAccountId), { url }),
          rejectsWith('webhook_url_blocked'),
        );
        assert.equal(
          (await guarded.gateway.webhooks.listWebhooks(accountScope(guardedAccountId))).length,
          storedBefore,
          'nothing is stored',
        );

        const { webhook } = await permissive.gateway.webhooks.createWebhook(accountScope(permissiveAccountId), { url });
        assert.equal(webhook.url, new URL(url).toString());
        const stored = await permissive.gateway.webhooks.getWebhook(accountScope(permissiveAccountId), webhook.id);
        assert.equal(stored.url, webhook.url);
      });
    }

    it('the refusal says why and names the switch for local development', async () => {
      await assert.rejects(
        guarded.gateway.webhooks.createWebhook(accountScope(guardedAccountId), { url: 'http://169.254.169.254/latest/meta-data' }),
        (error: unknown) => {
          assert.ok(error instanceof AppError && error.code === 'webhook_url_blocked', String(error));
          assert.match(error.message, /169\.254\.169\.254/);
          assert.match(error.message, /WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS/);
          assert.deepEqual(error.meta, { host: '169.254.169.254', port: 80, resolved_addresses: ['169.254.169.254'] });
          return true;
        },
      );
    });

    it('public addresses are accepted without the switch', async () => {
      for (const url of ['http://8.8.8.8/hook', 'https://[2606:4700:4700::1111]/hook']) {
        const { webhook } = await guarded.gateway.webhooks.createWebhook(accountScope(guardedAccountId), { url });
        assert.equal(webhook.url, url);
      }
    });

    it("changing a webhook's URL to a blocked host is refused too, and the old URL stays", async () => {
      const { webhook } = await guarded.gateway.webhooks.createWebhook(accountScope(guardedAccountId), { url: 'https://8.8.4.4/hook' });
      for (const url of ['http://127.0.0.1/hook', 'http://[::ffff:10.0.0.1]/hook', 'http://localhost:3000/hook']) {
        await assert.rejects(
          guarded.gateway.webhooks.updateWebhook(accountScope(guardedAccountId), webhook.id, { url }),
          rejectsWith('webhook_url_blocked'),
          url,
        );
      }
      assert.equal((await guarded.gateway.webhooks.getWebhook(operatorScope(), webhook.id)).url, 'https://8.8.4.4/hook');
    });

    it('a malformed or non-http URL is refused with invalid_webhook_url, with or without the switch', async () => {
      for (const url of ['not a url', 'ftp://x', '', 'http://', 'file:///etc/passwd', 'javascript:alert(1)']) {
        for (const [test, accountId] of [
          [guarded, guardedAccountId],
          [permissive, permissiveAccountId],
        ] as const) {
          await assert.rejects(
            test.gateway.webhooks.createWebhook(accountScope(accountId), { url }),
            rejectsWith('invalid_webhook_url'),
            JSON.stringify(url),
          );
        }
      }
    });
  });
}

describe('a delivery attempt checks the address it actually connects to', () => {
  let receiver: WebhookReceiver;
  let guardedClient: WebhookHttpClient;
  let permissiveClient: WebhookHttpClient;

  before(async () => {
    receiver = await WebhookReceiver.start();
    guardedClient = new WebhookHttpClient({ timeoutMs: 2_000, addressPolicy: STRICT_ADDRESS_POLICY, userAgent: 'x' });
    permissiveClient = new WebhookHttpClient({ timeoutMs: 2_000, addressPolicy: { everything: true, hosts: [] }, userAgent: 'x' });
  });
  after(async () => {
    guardedClient?.close();
    permissiveClient?.close();
    await receiver?.close();
  });

  it('a POST to a loopback receiver, by address, by name or by another spelling, fails as blocked_address and sends nothing', async () => {
    const urls = [
      `http://127.0.0.1:${receiver.port}/`,
      `http://localhost:${receiver.port}/`,
      `http://[::ffff:127.0.0.1]:${receiver.port}/`,
      `http://0x7f.1:${receiver.port}/`,
      `http://2130706433:${receiver.port}/`,
    ];
    for (const url of urls) {
      const result = await guardedClient.post(url, '{"event":"test"}', {});
      assert.equal(result.error, 'blocked_address', `${url}: ${JSON.stringify(result)}`);
      assert.equal(result.statusCode, null, url);
    }
    // The allowed client's request is a barrier: once it has arrived, anything the guarded
    // client had let through would have arrived too.
    const control = await permissiveClient.post(`http://127.0.0.1:${receiver.port}/control`, '{}', {});
    assert.equal(control.statusCode, 200, JSON.stringify(control));
    await receiver.waitForRequests(1);
    assert.deepEqual(
      receiver.requests.map((request) => request.path),
      ['/control'],
      'the receiver saw only the allowed request',
    );
  });

  it('with private addresses allowed, the same URLs reach the receiver and get its 200', async () => {
    const already = receiver.requests.length;
    for (const path of ['/by-address', '/by-name']) {
      const host = path === '/by-address' ? '127.0.0.1' : 'localhost';
      const result = await permissiveClient.post(`http://${host}:${receiver.port}${path}`, '{"event":"test"}', {});
      assert.equal(result.error, null, JSON.stringify(result));
      assert.equal(result.statusCode, 200);
    }
    await receiver.waitForRequests(already + 2);
    assert.deepEqual(
      receiver.requests.slice(already).map((request) => [request.path, request.body]),
      [
        ['/by-address', '{"event":"test"}'],
        ['/by-name', '{"event":"test"}'],
      ],
    );
  });
});

/** A gateway on an existing database, so that two gateways with different settings share it. */
async function openGateway(database: TestDatabase, env: Record<string, string>): Promise<Gateway> {
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: TEST_SECRET_KEY,
    WAGW_WEBHOOK_POLL_INTERVAL_MS: '50',
    ...env,
  });
  return createGateway(config, createLogger(config));
}

async function deliveryOf(gateway: Gateway, webhookId: string) {
  const [only, ...others] = await gateway.webhooks.listDeliveries(operatorScope(), webhookId);
  assert.equal(others.length, 0);
  return only?.delivery;
}

for (const dialect of dialects) {
  describe(`a URL that was allowed when saved is checked again at delivery (${dialect})`, () => {
    let database: TestDatabase;
    let receiver: WebhookReceiver;
    let permissive: Gateway;
    let guarded: Gateway;

    before(async () => {
      database = await createTestDatabase(dialect);
      receiver = await WebhookReceiver.start();
      // The permissive gateway migrates first; the guarded one then opens the same schema.
      permissive = await openGateway(database, ALLOW_PRIVATE);
      guarded = await openGateway(database, {});
    });
    after(async () => {
      await Promise.all([guarded?.close(), permissive?.close()]);
      await receiver?.close();
      await database?.drop();
    });

    it('a worker without the switch logs blocked_address for a webhook saved with it, and the receiver gets nothing', async () => {
      const { accountId } = await seedAccount(permissive, { numbers: 0 });
      const byAddress = await permissive.webhooks.createWebhook(accountScope(accountId), { url: receiver.url('/by-address') });
      const byName = await permissive.webhooks.createWebhook(accountScope(accountId), { url: `http://localhost:${receiver.port}/by-name` });
      await permissive.webhooks.sendTestEvent(operatorScope(), byAddress.webhook.id);
      await permissive.webhooks.sendTestEvent(operatorScope(), byName.webhook.id);

      guarded.deliveryWorker.start();
      const attempted = await waitFor(
        async () => {
          const deliveries = await Promise.all([byAddress, byName].map(({ webhook }) => deliveryOf(guarded, webhook.id)));
          return deliveries.every((delivery) => delivery !== undefined && delivery.attemptCount >= 1) && deliveries;
        },
        DELIVERY_TIMEOUT_MS,
        'the guarded worker to attempt both deliveries',
      );
      await guarded.deliveryWorker.stop();

      for (const delivery of attempted) {
        assert.equal(delivery!.state, 'pending', 'a blocked attempt is retried on schedule, like any failure');
        assert.equal(delivery!.lastStatusCode, null);
        assert.match(delivery!.lastError ?? '', /^blocked_address/);
        const { attempts } = await guarded.webhooks.getDelivery(operatorScope(), delivery!.id);
        assert.equal(attempts.length, 1);
        assert.equal(attempts[0]!.statusCode, null);
        assert.match(attempts[0]!.error ?? '', /^blocked_address: /);
      }
      assert.equal(receiver.requests.length, 0);

      // The same deliveries, sent by a worker with the switch, do arrive: the address alone
      // was what stopped them.
      permissive.deliveryWorker.start();
      for (const delivery of attempted) await permissive.webhooks.redeliver(operatorScope(), delivery!.id);
      await receiver.waitForRequests(2);
      await permissive.deliveryWorker.stop();
      assert.deepEqual(receiver.requests.map((request) => request.path).sort(), ['/by-address', '/by-name']);
    });
  });
}
