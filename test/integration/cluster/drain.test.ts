import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { RECIPIENT_AWAY, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { until } from '../../support/leases.ts';
import { serveTestNetwork, stopTestNetwork, TEST_SECRET_KEY_HEX } from '../../support/shared-network.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';

/**
 * A send that stays with the engine for a while: to another of the gateway's numbers whose
 * session is down, which the sandbox network waits for (2 s, its default: the tests' own wait is
 * longer than any drain) before it answers the sender.
 */
const HELD_SEND = RECIPIENT_AWAY;
async function slowSendSetup(test: TestGateway) {
  const seeded = await seedAccount(test.gateway, { numbers: 2 });
  await test.gateway.supervisor.numberAdded();
  const [from, to] = await Promise.all(seeded.phones.map((phone) => test.gateway.numbers.findNumber(operatorScope(), phone)));
  await until(
    () => test.gateway.keeper.leaseOf(from!.id) !== undefined && test.gateway.keeper.leaseOf(to!.id) !== undefined,
    'both numbers served',
  );
  // The recipient's session stops (its lease stays): the network holds a send to it.
  await test.gateway.supervisor.leaseLost(to!.id);
  return { seeded, from: from!, to: to! };
}

/** Waits until the send's row is written, queued: the send is with the engine (or about to be). */
async function untilQueued(test: TestGateway, text: string): Promise<void> {
  await until(async () => {
    const row = await test.gateway.store.db.selectFrom('messages').select('status').where('text', '=', text).executeTakeFirst();
    return row?.status === 'queued';
  }, `the send "${text}" to reach the engine`);
}

const messageStatus = async (test: TestGateway, text: string) =>
  (await test.gateway.store.db.selectFrom('messages').select('status').where('text', '=', text).executeTakeFirstOrThrow()).status;

for (const dialect of dialects) {
  describe(`a node giving its numbers up drains the sends already with the engine (${dialect})`, { timeout: 60_000 }, () => {
    let test: TestGateway | undefined;
    afterEach(async () => {
      await test?.close().catch(ignoreCleanupFailure);
      test = undefined;
    });

    it('a clean stop waits for a send in flight: it is recorded sent and answered 200; a send that comes meanwhile is answered 503 with Retry-After', async () => {
      test = await startTestGateway(dialect, { WAGW_OWNER_WAIT_MS: '500' }, HELD_SEND);
      const { seeded, from, to } = await slowSendSetup(test);
      const sending = test.post('/send_message', { from_phone: from.phone, to_phone: to.phone, message: 'drained' }, seeded.apiKey);
      await untilQueued(test, 'drained');

      const stopping = test.gateway.keeper.stop();
      await until(() => test!.gateway.keeper.leaseOf(from.id) === undefined, 'the stop to let no new work in');
      // New work for the number is let in no more; one node has nobody to hand it to, and says so.
      const late = await test.post('/send_message', { from_phone: from.phone, to_phone: '+14155550123', message: 'late' }, seeded.apiKey);
      assert.equal(late.statusCode, 503, late.body);
      assert.equal(late.json().error, 'number_not_connected');
      assert.ok(Number(late.headers['retry-after']) >= 1, `Retry-After ${late.headers['retry-after']}`);
      assert.equal(late.json().meta.retry_after_seconds, Number(late.headers['retry-after']));
      if (dialect === 'sqlite') {
        assert.match(late.json().message, /the gateway is stopping/);
        assert.doesNotMatch(late.json().message, /takeover/);
      }

      const answer = await sending;
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.json().status, 'sent');
      assert.equal(await messageStatus(test, 'drained'), 'sent');
      await stopping;
      const lease = await test.gateway.store.db
        .selectFrom('number_leases')
        .select('node_id')
        .where('number_id', '=', from.id)
        .executeTakeFirstOrThrow();
      assert.equal(lease.node_id, null, 'the lease is released once the send is recorded');
    });

    it('a send the fence refuses after the engine took it (the drain cut short) is still recorded sent and answered 200', async () => {
      test = await startTestGateway(dialect, { WAGW_HANDOVER_DRAIN_MS: '0' }, HELD_SEND);
      const { seeded, from, to } = await slowSendSetup(test);
      const sending = test.post('/send_message', { from_phone: from.phone, to_phone: to.phone, message: 'moved on' }, seeded.apiKey, {
        'idempotency-key': `moved-${dialect}`,
      });
      await untilQueued(test, 'moved on');
      // No drain: the lease is released while the engine still has the send.
      await test.gateway.keeper.stop();
      const answer = await sending;
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.json().status, 'sent');
      assert.equal(await messageStatus(test, 'moved on'), 'sent');
      // The key answers the same 200 from then on: a retry neither sends again nor waits.
      const replay = await test.post('/send_message', { from_phone: from.phone, to_phone: to.phone, message: 'moved on' }, seeded.apiKey, {
        'idempotency-key': `moved-${dialect}`,
      });
      assert.equal(replay.statusCode, 200, replay.body);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
    });
  });
}

describe('a simulated incoming message while the shared sandbox network is out of reach', { timeout: 30_000 }, () => {
  let test: TestGateway | undefined;
  let network: Awaited<ReturnType<typeof serveTestNetwork>> | undefined;
  after(async () => {
    await test?.close().catch(ignoreCleanupFailure);
    if (network !== undefined) await stopTestNetwork(network).catch(ignoreCleanupFailure);
  });

  it('is answered 503 number_not_connected with Retry-After, as a send is', async () => {
    network = await serveTestNetwork();
    test = await startTestGateway(dialects[0]!, {
      WAGW_SECRET_KEY: TEST_SECRET_KEY_HEX,
      WAGW_SANDBOX_NETWORK: `tcp://127.0.0.1:${network.port}`,
    });
    const seeded = await seedAccount(test.gateway, { numbers: 1 });
    await test.gateway.supervisor.numberAdded();
    await network.close();
    const answer = await test.post(
      '/sandbox/receive',
      { from_phone: '+14155550199', to_phone: seeded.phones[0], message: 'hi' },
      seeded.apiKey,
    );
    assert.equal(answer.statusCode, 503, answer.body);
    assert.equal(answer.json().error, 'number_not_connected');
    assert.ok(Number(answer.headers['retry-after']) >= 1, `Retry-After ${answer.headers['retry-after']}`);
  });
});
