import { operatorScope } from '../../../src/domain/tenant-scope.ts';
/**
 * Idempotent sends across time, crashes and processes: an original still in flight, a claim
 * left behind by a crash, keys past their 24 hours, and a gateway restarted on the same
 * database. The in-flight original is held at the WhatsApp boundary (a Baileys number whose
 * fake socket answers a send only when the test says so); everything inside is the real code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Boom } from '@hapi/boom';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../../src/config.ts';
import { buildApp } from '../../../src/app.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { newId } from '../../../src/domain/ids.ts';
import type { MessageStatus } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { IDEMPOTENCY_KEY_TTL_MS, requestFingerprint } from '../../../src/messaging/idempotent-send.ts';
import { claimIdempotencyKey, completeIdempotencyKey, findIdempotencyKey } from '../../../src/store/repositories/idempotency-keys.ts';
import { insertMessage, updateMessageStatus } from '../../../src/store/repositories/messages.ts';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { RecordingSocketFactory, type FakeSocket } from '../../support/fake-whatsapp.ts';
import { createTestDatabase, dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

interface HeldSends {
  answer(): void;
  /** WhatsApp's 463, which the engine reports as a refusal. */
  refuse(): void;
}

/** Holds every send of the socket at WhatsApp until the test answers or refuses it. */
function holdSends(socket: FakeSocket): HeldSends {
  const held: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const answerAsUsual = socket.answerSend;
  socket.answerSend = async (jid, content) => {
    await new Promise<void>((resolve, reject) => held.push({ resolve, reject }));
    return answerAsUsual(jid, content);
  };
  return {
    answer: () => {
      for (const send of held.splice(0)) send.resolve();
    },
    refuse: () => {
      for (const send of held.splice(0)) send.reject(new Boom('account restricted', { statusCode: 463 }));
    },
  };
}

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await delay(5);
  }
}

/**
 * A second gateway on the same database. As a node (`serves`), it claims numbers and runs their
 * sessions, as a restarted server does; otherwise it serves no number, as another node that does
 * not own the sender's number, and must answer what it can from the database alone.
 */
async function openSecondGateway(
  databaseUrl: string,
  serves = false,
): Promise<{ gateway: Gateway; app: FastifyInstance; close(): Promise<void> }> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16),
  });
  const gateway = await createGateway(config, createLogger(config));
  if (serves) await gateway.runtime.startSessions();
  const app = await buildApp(gateway);
  return {
    gateway,
    app,
    async close() {
      await app.close();
      await gateway.keeper.stop();
      await gateway.close();
    },
  };
}

const RECIPIENT = '+14155550100';
let keyCounter = 0;
const newKey = () => `retry-${process.pid}-${++keyCounter}`;

for (const dialect of dialects) {
  describe(`idempotent sends while the original is in flight (${dialect})`, () => {
    let test: TestGateway;
    const whatsapp = new RecordingSocketFactory();

    before(async () => {
      test = await startTestGateway(dialect, {}, { baileysSocketFactory: whatsapp.create });
    });
    after(async () => {
      await test.gateway.supervisor.stopAll();
      await test.close();
    });

    /** Links the number to a new fake socket, opens it, and holds its sends. */
    async function connect(phone: string): Promise<{ socket: FakeSocket; sends: HeldSends }> {
      await test.gateway.supervisor.link(await test.gateway.numbers.findNumber(operatorScope(), phone));
      const socket = whatsapp.latest;
      const sends = holdSends(socket);
      socket.openAs(phone.slice(1));
      await waitFor(
        'the number is connected',
        async () => (await test.gateway.numbers.findNumber(operatorScope(), phone)).status === 'connected',
      );
      return { socket, sends };
    }

    /** An account whose one number is a real (Baileys) one, linked to a held socket. */
    async function accountWithHeldNumber(): Promise<{ account: SeededAccount; socket: FakeSocket; sends: HeldSends }> {
      const account = await seedAccount(test.gateway, { numbers: 0 });
      const number = await test.gateway.numbers.addNumber(operatorScope(), {
        accountId: account.accountId,
        phone: uniquePhone(),
        engine: 'baileys',
      });
      return { account: { ...account, phones: [number.phone] }, ...(await connect(number.phone)) };
    }

    const sendVia = (app: FastifyInstance, account: SeededAccount, key: string) =>
      app.inject({
        method: 'POST',
        url: '/send_message',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
        payload: { from_phone: account.phones[0], to_phone: RECIPIENT, message: 'held at WhatsApp' },
      });

    it('a retry while the original is in flight gets 409 request_in_progress, here and in another gateway process on the same database', async () => {
      const { account, socket, sends } = await accountWithHeldNumber();
      const key = newKey();
      const original = sendVia(test.app, account, key);
      await waitFor('WhatsApp has the original', () => socket.sendCalls.length === 1);

      const second = await openSecondGateway(test.database.url);
      try {
        const retries = await Promise.all([
          ...Array.from({ length: 9 }, () => sendVia(test.app, account, key)),
          sendVia(second.app, account, key),
        ]);
        for (const retry of retries) {
          assert.equal(retry.statusCode, 409, retry.body);
          assert.equal(retry.json().error, 'request_in_progress');
        }
        sends.answer();
        const answered = await original;
        assert.equal(answered.statusCode, 200, answered.body);

        const replayedElsewhere = await sendVia(second.app, account, key);
        assert.equal(replayedElsewhere.statusCode, 200);
        assert.equal(replayedElsewhere.headers['idempotent-replayed'], 'true');
        assert.equal(replayedElsewhere.body, answered.body);
      } finally {
        await second.close();
      }
      assert.equal(socket.sendCalls.length, 1, 'WhatsApp was asked once');
      const stored = await listMessages(test.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 10 });
      assert.equal(stored.length, 1);
    });

    it('a refusal from WhatsApp after the message was written frees the key, and the retry sends', async () => {
      const { account, socket, sends } = await accountWithHeldNumber();
      const key = newKey();
      const original = sendVia(test.app, account, key);
      await waitFor('WhatsApp has the original', () => socket.sendCalls.length === 1);
      sends.refuse();
      const refused = await original;
      assert.equal(refused.statusCode, 503, refused.body);

      // The 463 paused the number (docs/number-pauses.md); resuming it stands for the restriction lifted.
      const resumed = await test.app.inject({
        method: 'POST',
        url: `/numbers/${encodeURIComponent(account.phones[0]!)}/resume`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.equal(resumed.statusCode, 200, resumed.body);
      const retry = sendVia(test.app, account, key);
      await waitFor('WhatsApp has the retry', () => socket.sendCalls.length === 2);
      sends.answer();
      const retried = await retry;
      assert.equal(retried.statusCode, 200, retried.body);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
      const stored = await listMessages(test.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 10 });
      assert.deepEqual(stored.map((message) => message.status).sort(), ['failed', 'sent']);
    });
  });
}

const TEXT = 'left behind by a crash';
const HOUR_MS = 60 * 60_000;

interface PlantedSend {
  /** How long ago the claim (and its message, if any) was made. */
  ageMs: number;
  /** The state its message reached before the crash; none means it was never written. */
  message?: { status: MessageStatus; errorCode?: string };
  text?: string;
  /** A completed key: the answer that was stored for it. */
  storedBody?: string;
}

/**
 * Writes what a gateway that crashed mid-send leaves behind, through the same repository
 * functions the gateway uses, dated `ageMs` ago: how a test ages a key without sleeping.
 */
async function plantSend(gateway: Gateway, account: SeededAccount, key: string, planted: PlantedSend): Promise<string> {
  const at = new Date(Date.now() - planted.ageMs);
  const messageId = newId('message');
  const number = await gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
  const text = planted.text ?? TEXT;
  const fingerprint = requestFingerprint({ fromPhone: number.phone, toPhone: RECIPIENT as E164, text });
  await gateway.committer.run(async (trx) => {
    const claim = await claimIdempotencyKey(trx, {
      accountId: account.accountId,
      key,
      fingerprint,
      messageId,
      at,
      expiredBefore: new Date(0),
    });
    assert.ok(claim.claimed);
    if (planted.storedBody !== undefined) await completeIdempotencyKey(trx, claim.record, { statusCode: 200, body: planted.storedBody });
    if (planted.message === undefined) return;
    await insertMessage(trx, {
      id: messageId,
      accountId: account.accountId,
      numberId: number.id,
      direction: 'outbound',
      fromPhone: number.phone,
      fromLid: null,
      toPhone: RECIPIENT as E164,
      text,
      contentKind: 'text',
      mediaId: null,
      structured: null,
      status: 'queued',
      engineMessageId: null,
      createdAt: at,
    });
    const { status, errorCode } = planted.message;
    if (status !== 'queued')
      await updateMessageStatus(trx, messageId, {
        status,
        at,
        ...(errorCode !== undefined && { errorCode }),
        ...(status === 'sent' && { engineMessageId: 'sbx_before_the_crash' }),
      });
  });
  return messageId;
}

const sendMessage = (app: FastifyInstance, account: SeededAccount, key: string, text = TEXT) =>
  app.inject({
    method: 'POST',
    url: '/send_message',
    headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    payload: { from_phone: account.phones[0], to_phone: RECIPIENT, message: text },
  });

for (const dialect of dialects) {
  describe(`WAGW_INTERRUPTED_SEND_AFTER_MS ties the interrupted-send sweep to the claims' abandonment (${dialect})`, () => {
    const AFTER_MS = 5_000;
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_INTERRUPTED_SEND_AFTER_MS: String(AFTER_MS) });
    });
    after(() => test.close());

    const statusOf = async (id: string) =>
      (await test.gateway.store.db.selectFrom('messages').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

    it('below the setting, neither the sweep nor a retry touches a send in flight; past it, both act, together', async () => {
      const account = await seedAccount(test.gateway);
      const young = newKey();
      const youngId = await plantSend(test.gateway, account, young, { ageMs: AFTER_MS - 2_000, message: { status: 'queued' } });
      const old = newKey();
      const oldId = await plantSend(test.gateway, account, old, { ageMs: AFTER_MS + 2_000, message: { status: 'queued' } });
      const unwritten = newKey();
      await plantSend(test.gateway, account, unwritten, { ageMs: AFTER_MS + 2_000 });

      await test.gateway.runtime.sweepOnce();
      assert.equal(await statusOf(youngId), 'queued', 'a send younger than the setting is left to finish');
      assert.equal(await statusOf(oldId), 'unknown', 'an older one is recorded as interrupted, its outcome unknown');
      const youngRetry = await sendMessage(test.app, account, young);
      assert.equal(youngRetry.json().error, 'request_in_progress', 'and its claim is not taken over');
      const oldRetry = await sendMessage(test.app, account, old);
      assert.equal(oldRetry.json().error, 'send_outcome_unknown', 'the older claim is resolved from the interrupted row');
      const takenOver = await sendMessage(test.app, account, unwritten);
      assert.equal(takenOver.statusCode, 200, 'a claim past the setting with no row is taken over and sent');
    });
  });
}

for (const dialect of dialects) {
  describe(`idempotent sends after a crash, and keys over time (${dialect})`, () => {
    let test: TestGateway;
    // Past the claim's abandonment age (WAGW_INTERRUPTED_SEND_AFTER_MS, 60 s by default).
    const abandoned = 60_000 + 60_000;

    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test.close());

    const outbound = (account: SeededAccount) =>
      listMessages(test.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 10 });

    it('a claim younger than its lease is honoured even with no message yet: 409', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      await plantSend(test.gateway, account, key, { ageMs: 0 });
      const response = await sendMessage(test.app, account, key);
      assert.equal(response.statusCode, 409, response.body);
      assert.equal(response.json().error, 'request_in_progress');
      assert.equal((await outbound(account)).length, 0);
    });

    it('a crash before the message was written: after the lease, the retry sends it, under the id the claim chose', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const plannedId = await plantSend(test.gateway, account, key, { ageMs: abandoned });
      const response = await sendMessage(test.app, account, key);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['idempotent-replayed'], undefined);
      assert.equal(response.json().message_id, plannedId);
      assert.equal((await outbound(account)).length, 1);
      assert.equal((await sendMessage(test.app, account, key)).headers['idempotent-replayed'], 'true');
    });

    it('a crash after WhatsApp accepted the message: the retry answers it as sent and sends nothing', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const messageId = await plantSend(test.gateway, account, key, { ageMs: abandoned, message: { status: 'sent' } });
      const response = await sendMessage(test.app, account, key);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['idempotent-replayed'], 'true');
      assert.equal(response.json().message_id, messageId);
      assert.equal(response.json().status, 'sent');
      assert.equal((await outbound(account)).length, 1);
      assert.equal((await test.gateway.accounts.usage(account.accountId)).used, 0, 'no unit was taken for the retry');
      assert.equal((await findIdempotencyKey(test.gateway.store.db, account.accountId, key))?.state, 'completed', 'the answer is kept');
    });

    it('a message still queued is in progress; once the sweep records it as interrupted, the answer is send_outcome_unknown, never a second send', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const messageId = await plantSend(test.gateway, account, key, { ageMs: abandoned, message: { status: 'queued' } });
      const queued = await sendMessage(test.app, account, key);
      assert.equal(queued.statusCode, 409, queued.body);
      assert.equal(queued.json().error, 'request_in_progress');

      assert.ok(
        (await test.gateway.sender.failInterruptedSends(new Date(Date.now() - test.gateway.idempotentSender.abandonedAfterMs))) >= 1,
      );
      for (let retry = 0; retry < 2; retry++) {
        const response = await sendMessage(test.app, account, key);
        assert.equal(response.statusCode, 409, response.body);
        assert.equal(response.json().error, 'send_outcome_unknown');
        assert.deepEqual(response.json().meta, { message_id: messageId, error_code: 'interrupted' });
      }
      assert.equal((await outbound(account)).length, 1, 'nothing was sent again');
    });

    it('a crash after WhatsApp refused the message frees the key: the retry sends a new message', async () => {
      const account = await seedAccount(test.gateway);
      const key = newKey();
      const refusedId = await plantSend(test.gateway, account, key, {
        ageMs: abandoned,
        message: { status: 'failed', errorCode: 'not_connected' },
      });
      const response = await sendMessage(test.app, account, key);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers['idempotent-replayed'], undefined);
      assert.notEqual(response.json().message_id, refusedId);
      assert.equal((await outbound(account)).length, 2);
    });

    it('a key past its 24 hours is as good as new: a different body sends, and so does the same one', async () => {
      const account = await seedAccount(test.gateway);
      const expired = IDEMPOTENCY_KEY_TTL_MS + HOUR_MS;
      const reusedKey = newKey();
      await plantSend(test.gateway, account, reusedKey, {
        ageMs: expired,
        text: "yesterday's text",
        message: { status: 'sent' },
        storedBody: '{"from":"yesterday"}',
      });
      const differentBody = await sendMessage(test.app, account, reusedKey);
      assert.equal(differentBody.statusCode, 200, differentBody.body);

      const sameKey = newKey();
      await plantSend(test.gateway, account, sameKey, { ageMs: expired, message: { status: 'sent' }, storedBody: '{"from":"yesterday"}' });
      const sameBody = await sendMessage(test.app, account, sameKey);
      assert.equal(sameBody.statusCode, 200, sameBody.body);
      assert.equal(sameBody.headers['idempotent-replayed'], undefined, 'not the stored answer');
      assert.equal((await outbound(account)).length, 4);

      const live = newKey();
      await plantSend(test.gateway, account, live, {
        ageMs: IDEMPOTENCY_KEY_TTL_MS - HOUR_MS,
        text: 'earlier today',
        message: { status: 'sent' },
        storedBody: '{}',
      });
      assert.equal((await sendMessage(test.app, account, live)).statusCode, 422, 'a key within its 24 hours still holds');
    });

    it('the sweep purges keys past their 24 hours and keeps the others', async () => {
      const account = await seedAccount(test.gateway);
      const [old, young] = [newKey(), newKey()];
      await plantSend(test.gateway, account, old, { ageMs: IDEMPOTENCY_KEY_TTL_MS + 1_000 });
      await plantSend(test.gateway, account, young, { ageMs: IDEMPOTENCY_KEY_TTL_MS - 60_000 });
      assert.ok((await test.gateway.idempotentSender.purgeExpired()) >= 1);
      assert.equal(await findIdempotencyKey(test.gateway.store.db, account.accountId, old), undefined);
      assert.ok(await findIdempotencyKey(test.gateway.store.db, account.accountId, young));
    });
  });

  describe(`idempotency keys across a restart (${dialect})`, () => {
    it('a gateway reopened on the same database replays a finished send and honours a claim in flight', async () => {
      const database = await createTestDatabase(dialect);
      try {
        const key = newKey();
        const inFlightKey = newKey();
        const first = await openSecondGateway(database.url, true);
        let account: SeededAccount;
        let original: LightMyRequestResponse;
        try {
          account = await seedAccount(first.gateway);
          original = await sendMessage(first.app, account, key);
          assert.equal(original.statusCode, 200, original.body);
          await plantSend(first.gateway, account, inFlightKey, { ageMs: 0 });
        } finally {
          await first.close();
        }
        const reopened = await openSecondGateway(database.url, true);
        try {
          const replay = await sendMessage(reopened.app, account, key);
          assert.equal(replay.statusCode, 200);
          assert.equal(replay.headers['idempotent-replayed'], 'true');
          assert.equal(replay.body, original.body);
          assert.equal((await sendMessage(reopened.app, account, inFlightKey)).statusCode, 409);
          const stored = await listMessages(reopened.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 10 });
          assert.equal(stored.length, 1);
        } finally {
          await reopened.close();
        }
      } finally {
        await database.drop();
      }
    });
  });
}
