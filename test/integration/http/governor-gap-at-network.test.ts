import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NetworkConnection } from '../../../src/engines/sandbox/sandbox-network-protocol.ts';
import { SandboxNetwork } from '../../../src/engines/sandbox/sandbox-network.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { waitForValue } from '../../support/waiting.ts';

const GAP_MS = 1_000;
/** How long the first send takes to reach the network after its decision: most of a gap. */
const SLOW_MS = 800;

// Issue 37, item 3: the governor counted a number's gap from its decision, so a send that took
// long to reach the network (a slow commit, a slow engine) was followed by one that did not, less
// than min_gap_ms later as the network saw them (1,921 ms at 2,000). The network's journal is the
// witness here: the first send is held on its way to the network, and the next ones must still
// reach it at least min_gap_ms after it and after each other.

for (const dialect of dialects) {
  describe(`the governor's gap as the network sees it (${dialect})`, () => {
    let test: TestGateway;
    /** Resolves the first slow send's hold once the test has sent what must come after it. */
    let slowEntered: (() => void) | undefined;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_SEND_QUEUE_CHECK_MS: '100' });
      test.gateway.queueRunner.start();
      // Sessions connect through here: a send whose text starts "slow" is held on its way to the
      // network, as a slow engine or a slow commit holds it.
      const network = test.gateway.sandboxNetwork;
      const connect = network.connect.bind(network);
      network.connect = async (...args) => {
        const connection = await connect(...args);
        const slowed: NetworkConnection = {
          send: async (to, text, media, extras) => {
            if (text.startsWith('slow')) {
              slowEntered?.();
              await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
            }
            return connection.send(to, text, media, extras);
          },
          markRead: (to, ids) => connection.markRead(to, ids),
          close: () => connection.close(),
        };
        return slowed;
      };
    });
    after(() => test.close());

    it('keeps min_gap_ms between consecutive sends at the network, counted from the engine taking the previous one', async () => {
      const seeded = await seedAccount(test.gateway, { monthlyLimit: 100 });
      const phone = seeded.phones[0]!;
      const policy = await test.inject({
        method: 'PATCH',
        url: `/numbers/${encodeURIComponent(phone)}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
        payload: JSON.stringify({ send_policy: { min_gap_ms: GAP_MS, max_gap_ms: GAP_MS } }),
      });
      assert.equal(policy.statusCode, 200, policy.body);
      const send = (message: string) => test.post('/send_message', { from_phone: phone, to_phone: '+14155550100', message }, seeded.apiKey);

      const entered = new Promise<void>((resolve) => {
        slowEntered = resolve;
      });
      // The first leaves at once and is held on its way; the second and third are decided while it
      // is held. (A third sent once the first was answered is decided whenever the machine gets to
      // it: on a loaded one, after the second left and its gap passed, when leaving at once is
      // right. What must hold whatever the load is the gaps at the network, below.)
      const first = send(`slow first ${dialect}`);
      await entered;
      const second = send(`second ${dialect}`);
      const third = send(`third ${dialect}`);
      assert.equal((await first).statusCode, 200, 'the first leaves at once');
      assert.equal((await second).statusCode, 202, 'the second waits for its gap');
      assert.equal((await third).statusCode, 202, 'the third waits for its gap');

      const texts = [`slow first ${dialect}`, `second ${dialect}`, `third ${dialect}`];
      const network = test.gateway.sandboxNetwork;
      assert.ok(network instanceof SandboxNetwork, 'the in-process network, with its journal');
      const sends = await waitForValue(() => {
        const journal = network.journal();
        const found = texts.map((text) => journal.find((entry) => entry.kind === 'send' && entry.text === text));
        return found.every((entry) => entry !== undefined) ? found.map((entry) => entry!) : undefined;
      }, 'all three sends on the network');
      const gaps = sends.slice(1).map((entry, index) => entry.at - sends[index]!.at);
      for (const gap of gaps) assert.ok(gap >= GAP_MS, `gaps at the network ${JSON.stringify(gaps)} ms, each at least ${GAP_MS}`);
    });
  });
}
