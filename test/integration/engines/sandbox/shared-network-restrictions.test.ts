import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import { SendRestrictedError, type NetworkConnection, type NetworkRestriction } from '../../../../src/engines/sandbox/sandbox-network.ts';
import { serveTestNetwork, stopTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';

const RESTRICTED = '+447700900821';
const LIMITED = '+447700900822';
const CUSTOMER = '+14155550191';

// A restriction asked for on one node reaches the number's session on another over the shared
// network's protocol, and its sends are refused as the restriction it is, until it lifts.
describe('the shared sandbox network carries restrictions between nodes', () => {
  let shared: { port: number; close(): Promise<void> };
  let asking: RemoteSandboxNetwork;
  let serving: RemoteSandboxNetwork;
  let restricted: NetworkConnection;
  let limited: NetworkConnection;
  const heard: NetworkRestriction[] = [];

  before(async () => {
    shared = await serveTestNetwork();
    asking = testNetworkClient(shared.port);
    serving = testNetworkClient(shared.port);
    const device = {
      incoming: async () => undefined,
      receipt: () => undefined,
      replaced: () => undefined,
      restricted: (restriction: NetworkRestriction) => void heard.push(restriction),
    };
    restricted = await serving.connect(RESTRICTED, 'node-b', device);
    limited = await serving.connect(LIMITED, 'node-b', device);
  });

  after(() => stopTestNetwork(shared, asking, serving));

  it('a 463 is told to the number at once, and refuses its sends until the lift time', async () => {
    // Long enough that the refused send is surely tried before the lift, with other test files
    // sharing this process's event loop (300 ms once ran out first).
    const until = Date.now() + 1_500;
    await asking.restrict(RESTRICTED, { kind: 'restricted', until });
    for (let tries = 0; tries < 200 && heard.length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(heard, [{ kind: 'restricted', until }]);
    await assert.rejects(
      restricted.send(CUSTOMER, 'hi'),
      (error: unknown) =>
        error instanceof SendRestrictedError && error.restriction.kind === 'restricted' && error.restriction.until === until,
    );
    await new Promise((resolve) => setTimeout(resolve, until - Date.now() + 20));
    assert.ok((await restricted.send(CUSTOMER, 'lifted')).id, 'it sends once the restriction has lifted');
  });

  it("rate-overlimit is told to nobody, and answers the number's sends", async () => {
    const until = Date.now() + 60_000;
    await asking.restrict(LIMITED, { kind: 'rate_overlimit', until });
    await assert.rejects(
      limited.send(CUSTOMER, 'hi'),
      (error: unknown) => error instanceof SendRestrictedError && error.restriction.kind === 'rate_overlimit',
    );
    assert.equal(heard.filter((restriction) => restriction.kind === 'rate_overlimit').length, 0);
  });
});
