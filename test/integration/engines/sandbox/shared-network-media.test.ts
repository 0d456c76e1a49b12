import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import { serveTestNetwork, stopTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';
import type { NetworkMessage } from '../../../../src/engines/sandbox/sandbox-network.ts';
import { samples } from '../../../support/media-samples.ts';

// Nodes of a cluster share one simulated network over TCP; files, places and contact cards must
// cross it as they do within one process.
describe('the shared sandbox network carries files, places and cards between nodes', () => {
  let shared: { port: number; close(): Promise<void> };
  let first: RemoteSandboxNetwork;
  let second: RemoteSandboxNetwork;
  const received: NetworkMessage[] = [];

  before(async () => {
    shared = await serveTestNetwork();
    first = testNetworkClient(shared.port);
    second = testNetworkClient(shared.port);
    await second.connect('+447700900802', 'node-b', {
      incoming: async (message) => void received.push(message),
      receipt: () => undefined,
      replaced: () => undefined,
    });
  });

  after(() => stopTestNetwork(shared, first, second));

  it('a file sent from a number on one node arrives, bytes and all, at a number on another', async () => {
    const connection = await first.connect('+447700900801', 'node-a', {
      incoming: async () => undefined,
      receipt: () => undefined,
      replaced: () => undefined,
    });
    const media = { kind: 'document', mimeType: 'application/pdf', fileName: 'inv.pdf', base64: samples.pdf(5000).toString('base64') };
    await connection.send('+447700900802', 'the invoice', async () => media);
    const message = received.find((each) => each.text === 'the invoice');
    assert.deepEqual(message?.media, media);
  });

  it('a simulated place arrives as it was injected', async () => {
    const structured = { location: { latitude: 51.5, longitude: -0.12, name: 'Here', address: null, url: null } };
    await first.inject('+14155550123', '+447700900802', 'meet here', undefined, structured);
    assert.deepEqual(received.find((each) => each.text === 'meet here')?.structured, structured);
  });
});
