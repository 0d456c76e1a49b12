import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { findIdempotencyKey } from '../../../src/store/repositories/idempotency-keys.ts';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const RECIPIENT = '+14155550100';

let keyCounter = 0;
/** A fresh key per test, so that no test answers from another's record. */
function newKey(): string {
  keyCounter += 1;
  return `order-${process.pid}-${keyCounter}`;
}

for (const dialect of dialects) {
  describe(`idempotent sends (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test.close());

    const send = (
      account: SeededAccount,
      key: string | undefined,
      message = 'Your order has shipped',
      path = '/send_message',
      fromPhone = account.phones[0],
    ) =>
      test.post(
        path,
        { from_phone: fromPhone, to_phone: RECIPIENT, message },
        account.apiKey,
        key === undefined ? {} : { 'idempotency-key': key },
      );

    const outboundMessages = (account: SeededAccount) =>
      listMessages(test.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 100 });

    const used = async (account: SeededAccount) => (await test.gateway.accounts.usage(account.accountId)).used;

    it('the same key with the same body answers the original response, and sends and counts one message', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const first = await send(account, key);
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers['idempotent-replayed'], undefined, 'the original is not a replay');

      for (let retry = 0; retry < 3; retry++) {
        const again = await send(account, key);
        assert.equal(again.statusCode, 200);
        assert.equal(again.body, first.body, 'byte for byte the original body');
        assert.equal(again.headers['idempotent-replayed'], 'true');
      }
      assert.equal((await outboundMessages(account)).length, 1);
      assert.equal(await used(account), 1, 'the quota is counted once');
    });

    it('the body is compared after normalisation: the same phones written differently are the same request', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const phone = account.phones[0]!;
      const first = await send(account, key);
      const spaced = `${phone.slice(0, 3)} ${phone.slice(3, 7)} ${phone.slice(7)}`.replace('+', '');
      const again = await send(account, key, 'Your order has shipped', '/send_message', spaced);
      assert.equal(again.statusCode, 200);
      assert.equal(again.body, first.body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
    });

    it('/send_message and /api/send_message share keys: a retry on the other path is a replay', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const first = await send(account, key, 'one operation', '/send_message');
      const other = await send(account, key, 'one operation', '/api/send_message');
      assert.equal(other.statusCode, 200);
      assert.equal(other.body, first.body);
      assert.equal(other.headers['idempotent-replayed'], 'true');
      const reused = await send(account, key, 'a different text', '/api/send_message');
      assert.equal(reused.statusCode, 422);
      assert.equal((await outboundMessages(account)).length, 1);
    });

    it('the same key with a different body is refused with 422 idempotency_key_reused, and nothing is sent', async () => {
      const account = await seedAccount(test.gateway, { numbers: 2 });
      const key = newKey();
      assert.equal((await send(account, key, 'first text')).statusCode, 200);
      const differences = [
        { message: 'second text', fromPhone: account.phones[0] },
        { message: 'first text', fromPhone: account.phones[1] },
      ];
      for (const difference of differences) {
        const response = await send(account, key, difference.message, '/send_message', difference.fromPhone);
        assert.equal(response.statusCode, 422, response.body);
        assert.equal(response.json().error, 'idempotency_key_reused');
        assert.equal(response.headers['idempotent-replayed'], undefined);
      }
      const toSomeoneElse = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550199', message: 'first text' },
        account.apiKey,
        { 'idempotency-key': key },
      );
      assert.equal(toSomeoneElse.statusCode, 422);
      assert.equal((await outboundMessages(account)).length, 1);
      assert.equal(await used(account), 1);
    });

    it('keys belong to an account: another account using the same key sends its own message', async () => {
      const first = await seedAccount(test.gateway);
      const second = await seedAccount(test.gateway);
      const key = newKey();
      const mine = await send(first, key, 'same text');
      const theirs = await send(second, key, 'same text');
      assert.equal(theirs.statusCode, 200, theirs.body);
      assert.equal(theirs.headers['idempotent-replayed'], undefined);
      assert.notEqual(theirs.json().message_id, mine.json().message_id);
      assert.equal(theirs.json().from_phone, second.phones[0]);
      const theirsWithOtherText = await send(second, newKey(), 'other text');
      assert.equal(theirsWithOtherText.statusCode, 200);
      assert.equal((await outboundMessages(first)).length, 1);
      assert.equal((await outboundMessages(second)).length, 2);
    });

    it('ten concurrent identical requests send exactly one message; the others replay it or are told it is in progress', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const responses = await Promise.all(Array.from({ length: 10 }, () => send(account, key)));
      const originals = responses.filter(
        (response) => response.statusCode === 200 && response.headers['idempotent-replayed'] === undefined,
      );
      assert.equal(originals.length, 1, responses.map((response) => `${response.statusCode} ${response.body}`).join('\n'));
      for (const response of responses) {
        if (response === originals[0]) continue;
        if (response.statusCode === 200) {
          assert.equal(response.headers['idempotent-replayed'], 'true');
          assert.equal(response.body, originals[0]!.body);
        } else {
          assert.equal(response.statusCode, 409, response.body);
          assert.equal(response.json().error, 'request_in_progress');
        }
      }
      assert.equal((await outboundMessages(account)).length, 1);
      assert.equal(await used(account), 1);
      const later = await send(account, key);
      assert.equal(later.body, originals[0]!.body, 'once finished, every retry gets the one answer');
    });

    it('a key that is not 1 to 255 printable ASCII characters is refused with 400, before anything is stored', async () => {
      const account = await seedAccount(test.gateway);
      for (const key of ['', 'k'.repeat(256), 'café-1', 'tab\there']) {
        const response = await send(account, key);
        assert.equal(response.statusCode, 400, `${JSON.stringify(key)}: ${response.body}`);
        assert.equal(response.json().error, 'invalid_idempotency_key');
        assert.deepEqual(response.json().meta, { field: 'Idempotency-Key' });
      }
      assert.equal((await outboundMessages(account)).length, 0);
      const longest = await send(account, `${'k'.repeat(254)}~`);
      assert.equal(longest.statusCode, 200, 'exactly 255 characters is a key');
    });

    it('a send without the header works as before and leaves no key behind', async () => {
      const account = await seedAccount(test.gateway);
      const first = await send(account, undefined);
      const second = await send(account, undefined);
      assert.equal(first.statusCode, 200);
      assert.equal(second.statusCode, 200);
      assert.notEqual(first.json().message_id, second.json().message_id, 'without a key, a retry is a new message');
      const rows = await test.gateway.store.db
        .selectFrom('idempotency_keys')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('account_id', '=', account.accountId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(rows.count), 0);
    });

    it('a failure that sent nothing frees the key: after a 503, the retry with the same key sends', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'disconnected');
      const refused = await send(account, key);
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(await findIdempotencyKey(test.gateway.store.db, account.accountId, key), undefined, 'the key was released');

      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'connected');
      const retried = await send(account, key);
      assert.equal(retried.statusCode, 200, retried.body);
      assert.equal(retried.headers['idempotent-replayed'], undefined, 'a real send, not a replay of the 503');
      assert.equal(await used(account), 1);
      assert.equal((await outboundMessages(account)).length, 1, 'the refused request never wrote a message');
    });

    it('a 429 frees the key too: once the limit is raised, the retry with the same key sends', async () => {
      const account = await seedAccount(test.gateway, { monthlyLimit: 1 });
      assertStatus(await send(account, undefined, 'uses the only unit'), 200);
      const key = newKey();
      assertStatus(await send(account, key), 429);
      await test.gateway.accounts.updateAccount(account.accountId, { customMonthlyLimit: 2 });
      const retried = await send(account, key);
      assertStatus(retried, 200);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
      assert.equal(await used(account), 2);
    });

    it('the API reference documents the header, the replay marker and the new answers', async () => {
      const document = (await test.inject({ method: 'GET', url: '/openapi.json' })).json();
      for (const path of ['/send_message', '/api/send_message']) {
        const operation = document.paths[path].post;
        const parameter = operation.parameters.find((candidate: { name: string }) => candidate.name === 'idempotency-key');
        assert.equal(parameter?.in, 'header', path);
        assert.ok(operation.responses['200'].headers['Idempotent-Replayed'], path);
        for (const status of ['409', '422']) assert.ok(operation.responses[status], `${path} ${status}`);
      }
    });
  });
}

function assertStatus(response: LightMyRequestResponse, status: number): void {
  assert.equal(response.statusCode, status, response.body);
}
