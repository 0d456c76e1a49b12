import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Boom } from '@hapi/boom';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { createDatabaseAuthState } from '../../../src/engines/baileys/auth-state-store.ts';
import { readCreds } from '../../../src/store/repositories/baileys-auth.ts';
import { SecretBox } from '../../../src/secrets/secret-box.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { operatorCaller } from '../../support/operator-api.ts';
import { waitUntil } from '../../support/waiting.ts';

/**
 * Logging a real number out over the operator API (ADR 0064): the Baileys engine, the store and
 * the HTTP stack are real, and only WhatsApp's side is a fake socket (fake-whatsapp.ts). The
 * sandbox's logout is operator-number-session.test.ts's.
 */
for (const dialect of dialects) {
  describe(`logging a Baileys number out over the operator API (${dialect})`, () => {
    const worlds: LinkedBaileysNumber[] = [];
    after(async () => {
      for (const world of worlds) await world.close();
    });

    /** A connected Baileys number with a stored Signal key beside its creds, and an operator token. */
    async function linkedNumber() {
      const world = await startLinkedBaileysNumber(dialect);
      worlds.push(world);
      const { test, number } = world;
      const lease = test.gateway.keeper.leaseOf(number.id)!;
      const auth = await createDatabaseAuthState(
        test.gateway.store,
        new SecretBox(test.gateway.config.secretKey!),
        lease,
        test.gateway.logger,
      );
      await auth.state.keys.set({ 'pre-key': { '1': { public: new Uint8Array(32).fill(1), private: new Uint8Array(32).fill(2) } } });
      const made = await test.gateway.operatorTokens.create('onboarding', CLI_ACTOR);
      const call = operatorCaller(
        () => test,
        () => made.plaintext,
      );
      return { ...world, call, tokenId: made.token.id };
    }

    const storedKeys = (world: LinkedBaileysNumber) =>
      world.test.gateway.store.db.selectFrom('baileys_auth_keys').select('key_id').where('number_id', '=', world.number.id).execute();
    const storedStatus = async (world: LinkedBaileysNumber) =>
      (await world.test.gateway.numbers.findNumber(operatorScope(), world.number.id)).status;

    it('tells WhatsApp, ends the socket, forgets the creds and keys, and the number is logged_out until it is linked again', async () => {
      const world = await linkedNumber();
      const { test, number, socket, whatsapp } = world;
      assert.ok((await readCreds(test.gateway.store.db, number.id)) !== undefined, 'linked: creds are stored');
      assert.equal((await storedKeys(world)).length, 1, 'and a key');

      const out = await world.call('POST', `/admin/numbers/${number.id}/session/logout`, {});
      assert.equal(out.statusCode, 200, out.body);
      assert.equal(socket.logoutCalls, 1, 'WhatsApp was told, once');
      assert.ok(socket.endCalls.length > 0, 'the socket was ended');
      assert.equal(await readCreds(test.gateway.store.db, number.id), undefined, 'the creds are gone');
      assert.deepEqual(await storedKeys(world), [], 'and the keys');
      await waitUntil(async () => (await storedStatus(world)) === 'logged_out', 'the number stored as logged_out');

      const sockets = whatsapp.sockets.length;
      const send = await test.inject({
        method: 'POST',
        url: '/send_message',
        headers: { authorization: `Bearer ${world.apiKey}`, 'content-type': 'application/json' },
        payload: { from_phone: number.phone, to_phone: '+14155550100', message: 'after the logout' },
      });
      assert.deepEqual([send.statusCode, send.json().error], [503, 'number_not_connected'], send.body);
      // As at a boot: without creds the number is not resumed, so it opens no socket and shows no QR.
      await test.gateway.supervisor.resume(number);
      assert.equal(whatsapp.sockets.length, sockets, 'no socket for a number that is no longer linked');
      const again = await world.call('POST', `/admin/numbers/${number.id}/session/logout`, {});
      assert.deepEqual([again.statusCode, again.json().error], [409, 'session_action_refused'], 'nothing is left to log out');
      const restart = await world.call('POST', `/admin/numbers/${number.id}/session/restart`, {});
      assert.deepEqual(
        [restart.statusCode, restart.json().error],
        [409, 'session_action_refused'],
        'a logged-out number is linked, not restarted',
      );
      assert.equal(socket.logoutCalls, 1, 'the refusals told WhatsApp nothing');

      const rows = (await test.gateway.audit.list(operatorScope(), { accountId: world.accountId, limit: 20 })).filter(
        (row) => row.targetId === number.id && row.action === 'number.logged_out',
      );
      assert.deepEqual(
        rows.map((row) => [row.actor.kind, row.actor.id, row.actor.address, row.details?.phone]),
        [['operator_token', world.tokenId, '127.0.0.1', number.phone]],
        'one row for the logout, naming the token and its address; none for the refusals',
      );
    });

    it('forgets the creds and keys even when WhatsApp cannot be told, since a socket already closing cannot', async () => {
      const world = await linkedNumber();
      const { test, number, socket } = world;
      socket.logout = async () => {
        socket.logoutCalls += 1;
        throw new Boom('Connection Closed', { statusCode: 428 });
      };
      const out = await world.call('POST', `/admin/numbers/${number.id}/session/logout`, {});
      assert.equal(out.statusCode, 200, out.body);
      assert.equal(socket.logoutCalls, 1);
      assert.equal(await readCreds(test.gateway.store.db, number.id), undefined, 'the creds are gone');
      assert.deepEqual(await storedKeys(world), [], 'and the keys');
      await waitUntil(async () => (await storedStatus(world)) === 'logged_out', 'the number stored as logged_out');
    });
  });
}
