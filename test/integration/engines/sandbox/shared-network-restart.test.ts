import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SessionStatusEvent } from '../../../../src/engines/engine-events.ts';
import type { E164 } from '../../../../src/domain/phone.ts';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import { SandboxEngine } from '../../../../src/engines/sandbox/sandbox-engine.ts';
import { sandboxNumber, serveTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';
import { ignoreCleanupFailure } from '../../../support/ignore.ts';

const PHONES = ['+447700900831', '+447700900832', '+447700900833'] as E164[];
/** Long enough for many failed dials while the network is away, as in the outage that left every number in conflict. */
const OUTAGE_MS = 4_000;

const until = async (check: () => boolean | Promise<boolean>, withinMs: number): Promise<boolean> => {
  for (const deadline = Date.now() + withinMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50)))
    if (await check()) return true;
  return check();
};

// After the shared network comes back from an outage, each number connects again once, in one
// reconnect loop with backoff: not in parallel chains whose connections replace one another and
// leave the number in conflict for good.
describe('a restart of the shared sandbox network', { timeout: 30_000 }, () => {
  let shared: Awaited<ReturnType<typeof serveTestNetwork>>;
  let client: RemoteSandboxNetwork;
  let engine: SandboxEngine;
  const statuses: SessionStatusEvent[] = [];
  const numbers = PHONES.map((phone, index) => sandboxNumber(`num_restart${index}`, phone));

  before(async () => {
    shared = await serveTestNetwork();
    client = testNetworkClient(shared.port);
    engine = new SandboxEngine({
      events: {
        incomingMessage: async () => assert.fail('no message is sent in this test'),
        sessionStatusChanged: async (event) => void statuses.push(event),
        receipt: async () => undefined,
        incomingAction: async () => undefined,
        groupChanged: async () => undefined,
        numberRestricted: async () => undefined,
        restrictionLifted: async () => undefined,
        identitiesLearned: async () => undefined,
        incomingCall: async () => undefined,
        presenceUpdate: async () => undefined,
        pollVote: async () => undefined,
      },
      network: client,
      nodeId: 'node-restart',
      findReceived: async () => undefined,
      listSandboxPhones: async () => PHONES,
    });
    for (const number of numbers) await engine.start(number, { numberId: number.id, nodeId: 'node-restart', epoch: 1 });
  });

  after(async () => {
    for (const number of numbers) await engine?.stop(number).catch(ignoreCleanupFailure);
    client?.close();
    await shared?.close();
  });

  it('leaves every number connected once, with no replacement and no conflict, within two seconds of its return', async () => {
    const port = shared.port;
    await shared.close();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    shared = await serveTestNetwork({ port });
    const back = Date.now();
    const connectedAgain = () => numbers.every((number) => engine.sessionStatus(number) === 'connected');
    assert.ok(
      await until(connectedAgain, 2_500),
      `every number connected again: ${numbers.map((number) => engine.sessionStatus(number)).join(', ')}`,
    );
    assert.ok(Date.now() - back <= 2_500);
    // Late chains, if any, would replace the connections now: give them the time to.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.deepEqual(
      numbers.map((number) => engine.sessionStatus(number)),
      ['connected', 'connected', 'connected'],
    );
    const journal = await client.journal();
    for (const phone of PHONES)
      assert.equal(journal.filter((entry) => entry.kind === 'connect' && entry.phone === phone).length, 1, `${phone} connected once`);
    assert.deepEqual(
      journal.filter((entry) => entry.kind === 'replace'),
      [],
    );
    assert.deepEqual(
      statuses.filter((event) => event.status === 'conflict'),
      [],
    );
  });
});
