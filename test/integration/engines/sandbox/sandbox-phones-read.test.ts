import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { E164 } from '../../../../src/domain/phone.ts';
import { SandboxEngine } from '../../../../src/engines/sandbox/sandbox-engine.ts';
import { SandboxNetwork } from '../../../../src/engines/sandbox/sandbox-network.ts';
import { RecordingEvents } from '../../../support/fake-whatsapp.ts';
import { sandboxNumber } from '../../../support/shared-network.ts';

const SENDER = '+447700900841' as E164;
const OUTSIDE_PHONES = Array.from({ length: 40 }, (_, index) => `+1415555${String(index).padStart(4, '0')}` as E164);

// The queue runner releases a pass's due messages of many numbers together; each send to a phone
// outside the gateway asks whether it is a sandbox number. Those sends must share one read of the
// gateway's sandbox phones, not each read the whole list (which cost most of a release's CPU).
describe('the sandbox engine, sending to many outside phones at once', () => {
  it('reads the gateway sandbox phones once for all of them', async () => {
    let reads = 0;
    const engine = new SandboxEngine({
      events: new RecordingEvents(),
      network: new SandboxNetwork(),
      nodeId: 'node-phonesread',
      findReceived: async () => undefined,
      listSandboxPhones: async () => {
        reads++;
        // As a query would, the answer comes on a later turn, while the other sends arrive.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return [SENDER];
      },
    });
    const number = sandboxNumber('num_phonesread', SENDER);
    await engine.start(number, { numberId: number.id, nodeId: 'node-phonesread', epoch: 1 });
    try {
      const sent = await Promise.all(OUTSIDE_PHONES.map((toPhone) => engine.sendMessage(number, { toPhone, text: 'released' })));
      assert.equal(sent.length, OUTSIDE_PHONES.length);
      assert.equal(reads, 1, 'the sends shared one read of the sandbox phones');
    } finally {
      await engine.stop(number);
    }
  });
});
