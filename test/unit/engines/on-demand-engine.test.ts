import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Engine } from '../../../src/engines/engine.ts';
import { BAILEYS_ENGINE } from '../../../src/engines/baileys/descriptor.ts';
import { onDemand } from '../../../src/engines/registry.ts';
import { newWhatsAppNumber, type SessionLease, type WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';

const number: WhatsAppNumber = newWhatsAppNumber(
  {
    id: 'num_1',
    accountId: 'acc_1',
    phone: '+447700900123' as E164,
    engine: 'baileys',
    status: 'connecting',
  },
  new Date(0),
);
const lease: SessionLease = { numberId: number.id, nodeId: 'node_1', epoch: 1 };

/** An engine that records what it was asked, standing in for the code an import would load. */
function recordingEngine(calls: string[]): Engine {
  const methods = {
    start: async () => void calls.push('start'),
    stop: async () => void calls.push('stop'),
    sessionStatus: () => 'connected' as const,
    listGroups: async () => [],
    updateBlock: async (on: WhatsAppNumber, phone: E164, blocked: boolean) => void calls.push(`updateBlock ${on.id} ${phone} ${blocked}`),
    linker: {
      link: async () => {
        calls.push('link');
        return { onUpdate: () => () => undefined, requestPairingCode: async () => '', stop: async () => undefined };
      },
    },
  };
  return { ...BAILEYS_ENGINE, ...methods } as unknown as Engine;
}

describe('an engine loaded on demand', () => {
  it('describes itself, answers for its sessions and stops them without loading its code', async () => {
    let loads = 0;
    const engine = onDemand(BAILEYS_ENGINE, async () => {
      loads += 1;
      return recordingEngine([]);
    });
    assert.equal(engine.kind, 'baileys');
    assert.equal(engine.initialStatus, 'connecting');
    assert.equal(engine.capabilities.linking, true);
    assert.equal(engine.sessionStatus(number), 'disconnected', 'nothing of an engine never loaded runs here');
    await engine.stop(number);
    assert.equal(loads, 0);
  });

  it('loads its code once, for the first call that needs it, however many arrive together', async () => {
    const calls: string[] = [];
    let loads = 0;
    const engine = onDemand(BAILEYS_ENGINE, async () => {
      loads += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return recordingEngine(calls);
    });
    await Promise.all([engine.start(number, lease), engine.start(number, lease), engine.listGroups(number)]);
    await engine.linker!.link(number, lease);
    await engine.stop(number);
    assert.equal(loads, 1);
    assert.deepEqual(calls, ['start', 'start', 'link', 'stop']);
    assert.equal(engine.sessionStatus(number), 'connected', 'once loaded, the engine answers');
  });

  it('tries the import again after it failed, rather than remembering the failure', async () => {
    let loads = 0;
    const engine = onDemand(BAILEYS_ENGINE, async () => {
      loads += 1;
      if (loads === 1) throw new Error('import failed');
      return recordingEngine([]);
    });
    await assert.rejects(engine.start(number, lease), /import failed/);
    await engine.start(number, lease);
    assert.equal(loads, 2);
  });

  it('forwards every capability of the port to the loaded engine, with its arguments, and nothing else', async () => {
    const calls: string[] = [];
    const engine = onDemand(BAILEYS_ENGINE, async () => recordingEngine(calls));
    await engine.updateBlock(number, '+447700900999' as E164, true);
    assert.deepEqual(calls, ['updateBlock num_1 +447700900999 true']);
    assert.equal(engine.simulator, undefined, 'an engine loaded on demand simulates nothing');
    // Handed out of an async function, the engine must not look like a promise.
    assert.equal(await Promise.resolve(engine), engine);
    assert.equal(JSON.stringify({ kind: engine.kind }), '{"kind":"baileys"}');
  });
});
