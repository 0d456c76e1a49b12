import assert from 'node:assert/strict';
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { STRICT_ADDRESS_POLICY } from '../../../src/webhooks/address-guard.ts';
import { WebhookHttpClient } from '../../../src/webhooks/webhook-http.ts';

// Runs alone: it counts DNS lookups by wrapping node:dns's functions for the whole process.

/** A receiver that counts the TCP connections it accepts, and closes each after one answer when told to. */
async function startCountingReceiver(
  closeEachConnection: () => boolean,
): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = http.createServer((_request, response) => {
    _request.resume();
    _request.on('end', () => response.writeHead(200, closeEachConnection() ? { connection: 'close' } : {}).end('ok'));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Counts the DNS lookups made while `work` runs, whichever of node:dns's two APIs makes them. */
async function countLookups(work: () => Promise<void>): Promise<number> {
  let lookups = 0;
  const callbackLookup = dns.lookup;
  const promiseLookup = dns.promises.lookup;
  dns.lookup = ((...args: Parameters<typeof dns.lookup>) => {
    lookups++;
    return (callbackLookup as (...a: unknown[]) => void)(...args);
  }) as typeof dns.lookup;
  dns.promises.lookup = ((...args: Parameters<typeof dns.promises.lookup>) => {
    lookups++;
    return promiseLookup(...args);
  }) as typeof dns.promises.lookup;
  try {
    await work();
  } finally {
    dns.lookup = callbackLookup;
    dns.promises.lookup = promiseLookup;
  }
  return lookups;
}

describe('the webhook client pools connections per origin and checks a host once for a few seconds', () => {
  let closing = false;
  let receiver: Awaited<ReturnType<typeof startCountingReceiver>>;
  let client: WebhookHttpClient;
  let guarded: WebhookHttpClient;

  before(async () => {
    receiver = await startCountingReceiver(() => closing);
    client = new WebhookHttpClient({ timeoutMs: 2_000, addressPolicy: { everything: true, hosts: [] }, userAgent: 'x' });
    guarded = new WebhookHttpClient({ timeoutMs: 2_000, addressPolicy: STRICT_ADDRESS_POLICY, userAgent: 'x' });
  });
  after(async () => {
    client?.close();
    guarded?.close();
    await receiver?.close();
  });

  it("twenty POSTs one after another to one endpoint share the pool's kept-alive connections", async () => {
    const before = receiver.connections();
    for (let i = 0; i < 20; i++) {
      const result = await client.post(`http://127.0.0.1:${receiver.port}/hook`, '{}', {});
      assert.equal(result.statusCode, 200, JSON.stringify(result));
      assert.equal(result.responseExcerpt, 'ok');
    }
    // A POST made the moment the last one's answer ended may find that connection not yet
    // released and open a second one; after that the two are reused.
    assert.ok(receiver.connections() - before <= 2, `${receiver.connections() - before} connections`);
  });

  it("new connections to a named host within the check's lifetime resolve the name once", async () => {
    closing = true;
    const before = receiver.connections();
    const lookups = await countLookups(async () => {
      for (let i = 0; i < 3; i++) {
        const result = await client.post(`http://localhost:${receiver.port}/hook`, '{}', {});
        assert.equal(result.statusCode, 200, JSON.stringify(result));
      }
    });
    closing = false;
    assert.equal(receiver.connections() - before, 3, 'the receiver closed every connection, so each POST made its own');
    assert.equal(lookups, 1);
  });

  it('a refused host stays refused on every attempt, its answer reused or not', async () => {
    for (let i = 0; i < 3; i++) {
      const result = await guarded.post(`http://localhost:${receiver.port}/hook`, '{}', {});
      assert.equal(result.error, 'blocked_address', JSON.stringify(result));
    }
  });
});
