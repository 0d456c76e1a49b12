import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SessionStatusEvent } from '../../../../src/engines/engine-events.ts';
import type { E164 } from '../../../../src/domain/phone.ts';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import { SandboxEngine } from '../../../../src/engines/sandbox/sandbox-engine.ts';
import { sandboxNumber, serveTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';
import { ignoreCleanupFailure } from '../../../support/ignore.ts';
import { sleep, waitUntil } from '../../../support/waiting.ts';

const PHONES = ['+447700900831', '+447700900832', '+447700900833'] as E164[];
/**
 * Long enough for failed dials while the network is away, as in the outage that left every number
 * in conflict: each number's reconnect loop (sandbox-engine.ts) dials at 0.25 s and at 1.25 s, both
 * refused (each refusal holds the dial for the client's 0.5 s redial pause), and its next try, at
 * 2.75 s, finds the network back. A second refused dial comes 0.75 s before the return, a margin
 * for a loaded machine's late timers; failed dials are what used to start the competing chains.
 */
const OUTAGE_MS = 2_000;
/** Longer than the longest pause of a reconnect loop (2 s) and a refused dial's 0.5 s after it. */
const LATE_CHAIN_WATCH_MS = 3_000;

// After the shared network comes back from an outage, each number connects again once, in one
// reconnect loop with backoff: not in parallel chains whose connections replace one another and
// leave the number in conflict for good.
describe('a restart of the shared sandbox network', () => {
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
        newChatQuota: async () => undefined,
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

  it('leaves every number connected once, with no replacement and no conflict, after its return', async () => {
    const port = shared.port;
    await shared.close();
    await sleep(OUTAGE_MS);
    shared = await serveTestNetwork({ port });
    // How soon is the reconnect loop's backoff (sandbox-engine.ts), which load stretches; what must
    // hold on any machine is that each number ends connected, once.
    await waitUntil(() => numbers.every((number) => engine.sessionStatus(number) === 'connected'), 'every number connected again');
    // Late chains, if any, would replace the connections now: give them the time to.
    await sleep(LATE_CHAIN_WATCH_MS);
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
