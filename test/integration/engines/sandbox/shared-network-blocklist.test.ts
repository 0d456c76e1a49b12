import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import {
  BlockedSenderError,
  type NetworkConnection,
  type NetworkMessage,
  type NetworkReceipt,
} from '../../../../src/engines/sandbox/sandbox-network.ts';
import { serveTestNetwork, stopTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';

const BLOCKER = '+447700900821';
const BLOCKED = '+447700900822';

// A blocklist kept by the shared network holds for every node: a blocked sender's message is
// accepted and never delivered (no receipt), and a simulated one is refused across the line.
describe('the shared sandbox network keeps blocklists', () => {
  let shared: { port: number; close(): Promise<void> };
  let first: RemoteSandboxNetwork;
  let second: RemoteSandboxNetwork;
  let sender: NetworkConnection;
  const received: NetworkMessage[] = [];
  const receipts: NetworkReceipt[] = [];

  before(async () => {
    shared = await serveTestNetwork();
    first = testNetworkClient(shared.port);
    second = testNetworkClient(shared.port);
    await first.connect(BLOCKER, 'node-a', {
      incoming: async (message) => void received.push(message),
      receipt: () => undefined,
      replaced: () => undefined,
    });
    sender = await second.connect(BLOCKED, 'node-b', {
      incoming: async () => undefined,
      receipt: (receipt) => void receipts.push(receipt),
      replaced: () => undefined,
    });
  });
  after(() => stopTestNetwork(shared, first, second));

  it('blocks, lists, holds back messages from the blocked phone, and lets them through once unblocked', async () => {
    await first.setBlocked(BLOCKER, BLOCKED, true);
    assert.deepEqual(await second.blocklistOf(BLOCKER), [BLOCKED], 'every node sees the one blocklist');
    const { id } = await sender.send(BLOCKER, 'are you there?');
    await delay(200);
    assert.deepEqual(
      [received.length, receipts.filter((receipt) => receipt.id === id).length],
      [0, 0],
      'never delivered, never acknowledged',
    );
    await assert.rejects(second.inject(BLOCKED, BLOCKER, 'simulated'), BlockedSenderError);

    await first.setBlocked(BLOCKER, BLOCKED, false);
    assert.deepEqual(await first.blocklistOf(BLOCKER), []);
    await sender.send(BLOCKER, 'now?');
    await delay(200);
    assert.deepEqual(
      received.map((message) => message.text),
      ['now?'],
    );
  });
});
