import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import type { NetworkConnection, NetworkMessage } from '../../../../src/engines/sandbox/sandbox-network.ts';
import { waitUntil } from '../../../support/waiting.ts';
import { serveTestNetwork, stopTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';

const SENDER = '+447700900841';
const RECIPIENT = '+447700900842';

// A message between two numbers on different nodes is never lost because the receiving node
// failed to store it (its database restarting, say): the node says so, and the network hands the
// message over again until it is stored.
describe('the shared sandbox network hands a message over again when the receiving node could not store it', () => {
  let shared: Awaited<ReturnType<typeof serveTestNetwork>>;
  let first: RemoteSandboxNetwork;
  let second: RemoteSandboxNetwork;
  let sender: NetworkConnection;
  const stored: NetworkMessage[] = [];
  let failuresLeft = 0;
  const receipts: string[] = [];
  let receiptFailuresLeft = 0;

  before(async () => {
    shared = await serveTestNetwork();
    first = testNetworkClient(shared.port);
    second = testNetworkClient(shared.port);
    sender = await first.connect(SENDER, 'node-a', {
      incoming: async () => undefined,
      receipt: async (receipt) => {
        if (receiptFailuresLeft > 0) {
          receiptFailuresLeft -= 1;
          throw new Error('the store is closing');
        }
        receipts.push(`${receipt.status} ${receipt.id}`);
      },
      replaced: () => undefined,
    });
    await second.connect(RECIPIENT, 'node-b', {
      incoming: async (message) => {
        if (failuresLeft > 0) {
          failuresLeft -= 1;
          throw new Error('the database is restarting');
        }
        stored.push(message);
      },
      receipt: () => undefined,
      replaced: () => undefined,
    });
  });

  after(() => stopTestNetwork(shared, first, second));

  it('a message the recipient failed to store twice is stored on a later try, once', async () => {
    failuresLeft = 2;
    const sent = await sender.send(RECIPIENT, 'kept until stored');
    for (let tries = 0; tries < 100 && !stored.some((message) => message.id === sent.id); tries++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(
      stored.filter((message) => message.id === sent.id).map((message) => message.text),
      ['kept until stored'],
    );
    assert.equal(failuresLeft, 0);
    const journal = await first.journal();
    assert.equal(journal.filter((entry) => entry.kind === 'deliver' && entry.id === sent.id).length, 1);
  });

  // Issue 37, ADR 0062: a receipt its sender's node could not write (its store closing at a
  // stop, say) is not lost with the write.
  it('a delivery receipt the sender failed to record twice is recorded on a later try, once', async () => {
    receiptFailuresLeft = 2;
    const sent = await sender.send(RECIPIENT, 'its receipt kept until recorded');
    await waitUntil(() => receipts.includes(`delivered ${sent.id}`), 'the receipt to be recorded');
    assert.deepEqual(
      receipts.filter((receipt) => receipt.endsWith(sent.id)),
      [`delivered ${sent.id}`],
    );
    assert.equal(receiptFailuresLeft, 0);
  });
});
