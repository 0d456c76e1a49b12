import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, type SeededAccount } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { request, waitFor, withTimeout } from '../raw-http.ts';
import { killAllServerProcesses, startServerProcess } from '../server-process.ts';

const INCOMING_MESSAGES = 50;
const SENDER = '+14155550100';
const TEST_SECRET_KEY = process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16);

/**
 * Retries every half second, so the whole story fits in seconds. Sixty of them: every attempt
 * made while the endpoint is down uses one up, both the killed server's (for as long as the 50
 * receives take) and the restarted one's (until the receiver is up), and on a loaded two-core
 * machine ten had all run out before the receiver came up, so nothing arrived. The attempt
 * timeout is short because a delivery the killed worker had claimed stays claimed for the
 * timeout plus a margin; with the default 15 s that alone would add 20 s to the test.
 */
const SERVER_ENV = {
  WAGW_SECRET_KEY: TEST_SECRET_KEY,
  WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
  WAGW_WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 60 }, () => '0.5').join(','),
  WAGW_WEBHOOK_POLL_INTERVAL_MS: '100',
  WAGW_WEBHOOK_TIMEOUT_MS: '1000',
};

/**
 * A free port below the kernel's ephemeral range. The receiver binds it seconds after it was
 * chosen, and in the meantime every outgoing connection of the test run takes an ephemeral
 * port; one from outside that range cannot be taken that way.
 */
async function portOutsideEphemeralRange(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = randomInt(20_000, 32_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('No free port found between 20000 and 32000');
}

/** A gateway in this process on the server's database; its delivery worker is never started. */
async function openGateway(databaseUrl: string): Promise<Gateway> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...SERVER_ENV });
  return createGateway(config, createLogger(config));
}

/** An account with a sandbox number and a webhook, made before any server runs. */
async function seedWebhook(databaseUrl: string, receiverPort: number): Promise<{ account: SeededAccount; webhookId: string }> {
  const gateway = await openGateway(databaseUrl);
  try {
    const account = await seedAccount(gateway);
    const { webhook } = await gateway.webhooks.createWebhook(accountScope(account.accountId), {
      url: `http://127.0.0.1:${receiverPort}/hook`,
    });
    return { account, webhookId: webhook.id };
  } finally {
    await gateway.close();
  }
}

const deliveriesOf = (gateway: Gateway, webhookId: string) => gateway.webhooks.listDeliveries(operatorScope(), webhookId, 1_000);

for (const dialect of dialects) {
  describe(`webhook deliveries survive kill -9 (${dialect})`, () => {
    let database: TestDatabase;
    let receiverPort: number;
    let account: SeededAccount;
    let webhookId: string;
    let receiver: WebhookReceiver | undefined;
    let observer: Gateway | undefined;

    before(async () => {
      database = await createTestDatabase(dialect);
      // The receiver's port is chosen now but nothing listens on it until after the restart,
      // so every attempt before then is refused.
      receiverPort = await portOutsideEphemeralRange();
      ({ account, webhookId } = await seedWebhook(database.url, receiverPort));
    });
    after(async () => {
      await killAllServerProcesses();
      await observer?.close();
      await receiver?.close();
      await database?.drop();
    });

    it('every incoming message answered 200 before the kill reaches the webhook after the restart; none is lost', {
      timeout: 120_000,
    }, async () => {
      const server = await startServerProcess(database.url, SERVER_ENV);
      const run = randomBytes(4).toString('hex');
      const answers = await Promise.all(
        Array.from({ length: INCOMING_MESSAGES }, (_, index) =>
          request(server.port, {
            method: 'POST',
            path: '/sandbox/receive',
            apiKey: account.apiKey,
            body: { from_phone: SENDER, to_phone: account.phones[0], message: `crash ${run} #${index}` },
          }),
        ),
      );
      for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
      const messageIds = new Set(answers.map((answer) => (JSON.parse(answer.body) as { message_id: string }).message_id));
      assert.equal(messageIds.size, INCOMING_MESSAGES);

      // Killed as soon as the last 200 is read, while the worker is still claiming, attempting
      // and recording; nothing gets the chance to flush or clean up.
      server.signalGroup('SIGKILL');
      const exit = await withTimeout(server.exited, 5_000, 'the killed server to exit');
      assert.equal(exit.signal, 'SIGKILL');

      await startServerProcess(database.url, SERVER_ENV);
      observer = await openGateway(database.url);
      // The outbox promise: a message answered 200 has its delivery committed with it.
      const queued = await deliveriesOf(observer, webhookId);
      assert.equal(queued.length, INCOMING_MESSAGES, 'every message answered 200 has a delivery after the restart');
      // The restarted worker is retrying into the void before the receiver comes up.
      await waitFor(
        async () =>
          (await deliveriesOf(observer!, webhookId)).some(({ attempts }) =>
            attempts.some((attempt) => attempt.error?.startsWith('refused')),
          ),
        10_000,
        'an attempt refused by the endpoint that is still down',
        50,
      );
      receiver = await WebhookReceiver.start(receiverPort);

      const isOurs = (body: { event?: string; message?: string }) =>
        body.event === 'message' && body.message?.startsWith(`crash ${run} `) === true;
      const arrivedIds = () =>
        new Set(
          receiver!.requests
            .map((received) => JSON.parse(received.body) as { event?: string; message?: string; message_id?: string })
            .filter(isOurs)
            .map((body) => body.message_id),
        );
      await waitFor(
        () => arrivedIds().size >= INCOMING_MESSAGES,
        40_000,
        `all ${INCOMING_MESSAGES} messages to reach the receiver`,
        50,
      ).catch(async (error: Error) => {
        const missing = [...messageIds].filter((id) => !arrivedIds().has(id));
        const states = (await deliveriesOf(observer!, webhookId)).map(
          ({ delivery, attempts }) => `${delivery.state} after ${attempts.length} attempts`,
        );
        const tally = [...new Set(states)].map((state) => `${states.filter((other) => other === state).length} ${state}`).join('; ');
        throw new Error(`${error.message}; missing ${missing.length}: ${missing.join(', ')}; deliveries: ${tally}`);
      });
      assert.deepEqual([...arrivedIds()].sort(), [...messageIds].sort(), 'exactly the answered messages arrived');

      // And the attempt log agrees: every delivery ends delivered, by its last attempt only.
      const final = await waitFor(
        async () => {
          const deliveries = await deliveriesOf(observer!, webhookId);
          return (
            deliveries.length === INCOMING_MESSAGES && deliveries.every(({ delivery }) => delivery.state === 'delivered') && deliveries
          );
        },
        10_000,
        'every delivery to be recorded as delivered',
      );
      for (const { delivery, attempts } of final) {
        assert.equal(delivery.eventType, 'message');
        assert.equal(attempts.at(-1)?.statusCode, 200, `${delivery.id} ended with a 200`);
        assert.ok(
          attempts.slice(0, -1).every((attempt) => attempt.error !== null),
          `${delivery.id}: only the last attempt succeeded`,
        );
      }
    });
  });
}
