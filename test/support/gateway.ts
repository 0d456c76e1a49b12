import { accountScope, operatorScope } from '../../src/domain/tenant-scope.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { createGateway, createLogger, type Gateway, type GatewayBoundaries } from '../../src/main.ts';
import type { Message } from '../../src/domain/model.ts';
import { DEFAULT_DELIVERY_WAIT_MS } from '../../src/engines/sandbox/sandbox-network.ts';
import { createMigratedTestDatabase, type Dialect, type TestDatabase } from './databases.ts';
import { ignoreCleanupFailure } from './ignore.ts';
import { TEST_COST_LOG2 } from './users.ts';
import { waitForValue } from './waiting.ts';

/** The sandbox network's delivery wait in tests: as long as a condition's wait (test/support/waiting.ts). */
const TEST_SANDBOX_DELIVERY_WAIT_MS = 60_000;
/**
 * For a test whose subject is a message the network holds for a recipient that is not there, so
 * that the wait runs out: the network's own 2 s. With the tests' 60 s, each such send would cost
 * a minute of wall time; such a test asserts what happens after the wait, not that storing fits in it.
 */
export const RECIPIENT_AWAY = { sandboxDeliveryWaitMs: DEFAULT_DELIVERY_WAIT_MS };

export interface TestGateway {
  gateway: Gateway;
  app: FastifyInstance;
  database: TestDatabase;
  /** Every log line the gateway wrote, for tests about what must never be logged. */
  logLines: string[];
  post(url: string, body: unknown, apiKey?: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Stops the gateway as a server stops, and starts a new one on the same database and media, as a restart does. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A log destination that keeps every line it is given in `lines`, for tests about what was logged. */
export function collectingSink(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
}

/**
 * A gateway on a fresh, migrated database of the dialect, with the real HTTP app on top. With
 * `WAGW_MEDIA_STORE: 's3'` and no bucket named, its media go to an S3 server of its own.
 */
export async function startTestGateway(
  dialect: Dialect,
  env: Record<string, string> = {},
  boundaries: GatewayBoundaries = {},
): Promise<TestGateway> {
  const database = await createMigratedTestDatabase(dialect);
  // Media bytes go to a directory of the test's own, removed with it.
  const mediaDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-test-media-'));
  // Loaded only when wanted: the S3 server's modules cost each test process a quarter of a second.
  const s3 =
    env.WAGW_MEDIA_STORE === 's3' && env.WAGW_MEDIA_S3_BUCKET === undefined
      ? await (await import('./s3-server.ts')).startS3Server()
      : undefined;
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    WAGW_MEDIA_DIR: mediaDirectory,
    WAGW_SECRET_KEY: process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16),
    ...s3?.env,
    ...env,
  });
  const logLines: string[] = [];
  const sink = collectingSink(logLines);
  const open = async () => {
    // Passwords hashed cheaply, as the test users are (support/users.ts): what is tested is the
    // sign-in's logic, and OWASP's cost would make each hash take a third of a second.
    // The sandbox network waits up to 2 s for a live recipient to store a message, then answers
    // as if it were away (a simulated receive: 503, nothing received). On a busy machine storing
    // can take longer than that, so tests wait as long as their conditions do (waiting.ts); a
    // test of the wait itself sets its own (delivery-wait.test.ts).
    const gateway = await createGateway(config, createLogger(config, sink), {
      passwordCostLog2: TEST_COST_LOG2,
      sandboxDeliveryWaitMs: TEST_SANDBOX_DELIVERY_WAIT_MS,
      ...boundaries,
    });
    // The node's leases and sessions run, as in a server; deliveries and sweeps are left to each test.
    await gateway.runtime.startSessions();
    const app = await buildApp(gateway);
    await app.ready();
    return { gateway, app };
  };
  const stop = async (running: { gateway: Gateway; app: FastifyInstance }) => {
    await running.app.close();
    await running.gateway.keeper.stop().catch(ignoreCleanupFailure);
    await running.gateway.close().catch(ignoreCleanupFailure);
  };
  const test: TestGateway = {
    ...(await open()),
    database,
    logLines,
    inject: (options: InjectOptions) => test.app.inject(options),
    post: (url, body, apiKey, headers = {}) =>
      test.inject({
        method: 'POST',
        url,
        headers: {
          'content-type': 'application/json',
          ...(apiKey !== undefined && { authorization: `Bearer ${apiKey}` }),
          ...headers,
        },
        payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      }),
    async restart() {
      await stop(test);
      Object.assign(test, await open());
    },
    async close() {
      await stop(test);
      await database.drop();
      fs.rmSync(mediaDirectory, { recursive: true, force: true });
      await s3?.close();
    },
  };
  return test;
}

export interface SeededAccount {
  accountId: string;
  apiKey: string;
  apiKeyId: string;
  phones: string[];
}

let phoneCounter = 0;

/** A fresh valid UK mobile number in the range reserved for fiction, unique within the run. */
export function uniquePhone(): string {
  phoneCounter += 1;
  return `+4477009${String(process.pid % 100).padStart(2, '0')}${String(phoneCounter).padStart(3, '0')}`;
}

/** An account with sandbox numbers and an API key, made through the same services the CLI uses. */
export async function seedAccount(
  gateway: Gateway,
  options: { plan?: string; monthlyLimit?: number; numbers?: number; scopes?: readonly string[] } = {},
): Promise<SeededAccount> {
  const account = await gateway.accounts.createAccount({
    name: 'Test account',
    ...(options.plan !== undefined && { plan: options.plan }),
    ...(options.monthlyLimit !== undefined && { customMonthlyLimit: options.monthlyLimit }),
  });
  const phones: string[] = [];
  for (let index = 0; index < (options.numbers ?? 1); index++) {
    const number = await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: uniquePhone() });
    phones.push(number.phone);
  }
  const key = await gateway.apiKeys.createKey({
    accountId: account.id,
    name: 'test',
    ...(options.scopes !== undefined && { scopes: options.scopes }),
  });
  return { accountId: account.id, apiKey: key.plaintext, apiKeyId: key.apiKey.id, phones };
}

/**
 * Moves one number's lease to a second gateway on the same database, as a second node would
 * take it over, runs `work`, and gives it back: the way to test two nodes acting at once.
 */
export async function withNumberOn<T>(first: Gateway, second: Gateway, phone: string, work: () => Promise<T>): Promise<T> {
  const number = await first.numbers.findNumber(operatorScope(), phone);
  // Released under the first node, as at a handover; the first learns it at its next tick, as a node learns of a deleted number.
  await first.store.db.updateTable('number_leases').set({ node_id: null }).where('number_id', '=', number.id).execute();
  await second.keeper.startPinned([number.id]);
  await second.supervisor.numberAdded();
  await first.keeper.tickSoon();
  try {
    return await work();
  } finally {
    await second.keeper.stop();
    // On SQLite the two gateways share one file from one thread. A write of the first that meets
    // the second's open transaction (a batch of receipts still in flight) waits out the busy
    // timeout synchronously, with the event loop, and so the second's transaction, frozen: 5 s
    // lost, and a failed lease tick. Separate processes wait for each other properly.
    await second.committer.drain();
    await first.supervisor.numberAdded();
  }
}

/**
 * The message the account received that `matches`, once its number has stored it. A sandbox
 * send is answered once the recipient has stored the message, or after the network's delivery
 * wait (2 s) whether or not it has, so on a busy machine the recipient's copy can come after the
 * sender's 200, and the account's newest message may still be the one before.
 */
export function receivedMessage(
  gateway: Gateway,
  accountId: string,
  matches: (message: Message) => boolean,
  what: string,
): Promise<Message> {
  return waitForValue(async () => {
    const page = await gateway.history.page(accountScope(accountId), { direction: 'inbound', limit: 20 });
    return page.messages.find(matches);
  }, what);
}

/**
 * The recipient's stored copy of a message the gateway sent as `sentMessageId`, once stored: matched
 * by the network's message id, never "the newest row" (the sandbox answers the sender before the
 * recipient stores when the machine is busy).
 */
export async function receivedCopyOf(
  gateway: Gateway,
  sender: { accountId: string },
  recipient: { accountId: string },
  sentMessageId: string,
  what: string,
): Promise<Message> {
  const engineId = await waitForValue(async () => {
    const page = await gateway.history.page(accountScope(sender.accountId), { direction: 'outbound', limit: 50 });
    return page.messages.find((message) => message.id === sentMessageId)?.engineMessageId ?? undefined;
  }, `the send of ${what} handed to the network`);
  return receivedMessage(gateway, recipient.accountId, (message) => message.engineMessageId === engineId, what);
}
