import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../src/domain/errors.ts';
import { newWhatsAppNumber, type WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { CLOUD_ENGINE } from '../../../src/engines/cloud/cloud-engine.ts';
import { declineMissing, type PartialEngine } from '../../../src/engines/session-binding.ts';

const number: WhatsAppNumber = newWhatsAppNumber(
  { id: 'num_1', accountId: 'acc_1', phone: '+447700900123' as E164, engine: 'cloud', status: 'connected' },
  new Date(0),
);

/** An engine of the Cloud API's kind that implements one capability of the port and nothing else. */
class OneCapabilityEngine implements PartialEngine {
  readonly kind = CLOUD_ENGINE.kind;
  readonly capabilities = CLOUD_ENGINE.capabilities;
  readonly initialStatus = CLOUD_ENGINE.initialStatus;
  readonly reads: string[] = [];
  readonly start = async (): Promise<void> => undefined;
  readonly stop = async (): Promise<void> => undefined;
  sessionStatus() {
    return 'connected' as const;
  }
  async listTemplates(on: WhatsAppNumber) {
    // Reads its own state through `this`, as an engine does: the wrapper must call it on the engine itself.
    this.reads.push(on.id);
    return [];
  }
}

describe('an engine that implements part of the session port', () => {
  it('runs what it implements on itself, and declines every other capability with 422 capability_not_supported naming it', async () => {
    const partial = new OneCapabilityEngine();
    const engine = declineMissing(partial);
    assert.deepEqual(await engine.listTemplates(number), []);
    assert.deepEqual(partial.reads, ['num_1']);
    for (const [call, capability] of [
      [() => engine.newChatQuota(number), 'new_chat_quota'],
      [() => engine.blocklist(number), 'blocklist'],
      [() => engine.subscribePresence(number, '+447700900124' as E164), 'subscribe_presence'],
    ] as const) {
      await assert.rejects(call(), (error: unknown) => {
        assert.ok(error instanceof AppError, String(error));
        assert.equal(error.code, 'capability_not_supported');
        assert.deepEqual(error.meta, { engine: 'cloud', capability });
        assert.match(error.message, new RegExp(`The cloud engine cannot .*${capability}`));
        return true;
      });
    }
  });

  it('keeps the members that are not capabilities as they are: absent ones stay absent', () => {
    const engine = declineMissing(new OneCapabilityEngine());
    assert.equal(engine.kind, 'cloud');
    assert.equal(engine.sessionStatus(number), 'connected');
    assert.equal(engine.linker, undefined);
    assert.equal(engine.simulator, undefined);
    assert.equal((engine as unknown as PromiseLike<unknown>).then, undefined, 'not taken for a promise when awaited');
  });
});
