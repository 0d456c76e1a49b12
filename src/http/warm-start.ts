import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { loadConfig } from '../config.ts';
import { accountScope, operatorScope } from '../domain/tenant-scope.ts';
import { createGateway, createLogger, type Gateway } from '../main.ts';
import { buildApp } from './app.ts';

/** Incoming messages and sends the rehearsal makes at most: past this, V8 has tiered the paths up. */
const REHEARSAL_MESSAGES = 2_000;
/** Requests in flight at once, so that batches form in the group commit as they do under load. */
const REHEARSAL_CONCURRENCY = 32;
const SCRATCH_PHONE = '+447700900999';
const OTHER_PHONE = '+14155550100';

export interface RehearsalReport {
  messages: number;
  deliveries: number;
  elapsedMs: number;
}

/**
 * Runs the hot paths (an incoming message to its signed webhook delivery, and a send) through a
 * scratch gateway of its own before this node listens, so that V8 has compiled and optimised
 * them by the time real traffic arrives: a fresh process otherwise ran its first thousands of
 * messages through unoptimised code, and at 1,000 a second fell up to a second behind
 * (docs/adr/0038-warm-start.md).
 *
 * Nothing of the operator's is touched. The scratch gateway has its own SQLite file in a
 * temporary folder, its own sandbox network, a silent log and its own metrics, and its webhook
 * points at a receiver on loopback in this process; all of it is removed afterwards. What carries
 * over to the real gateway is only what the process keeps: optimised code, and the validators
 * and serializers, which are cached by schema (request-validation.ts, response-serializers.ts).
 * It stops at `budgetMs` whatever it has done, and a failure only costs the warmth.
 */
export async function rehearseHotPaths(budgetMs: number, logger: Logger): Promise<RehearsalReport | undefined> {
  const cleanups: (() => unknown)[] = [];
  try {
    return await rehearseOnScratch(budgetMs, cleanups);
  } catch (error) {
    logger.warn({ err: error }, 'the warm start failed; the first requests will be slower');
    return undefined;
  } finally {
    // Last made, first removed. A cleanup that fails is logged and the start goes on: what it
    // leaves is a closed gateway's file in a temporary folder, nothing of the operator's.
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        logger.warn({ err: error }, 'the warm start could not remove all of its scratch gateway');
      }
    }
  }
}

/** The rehearsal itself; each part it makes is pushed onto `cleanups` as soon as it exists. */
async function rehearseOnScratch(budgetMs: number, cleanups: (() => unknown)[]): Promise<RehearsalReport> {
  const started = performance.now();
  const deadline = started + budgetMs;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-warm-start-'));
  cleanups.push(() => fs.rmSync(directory, { recursive: true, force: true }));
  const receiver = await startCountingReceiver();
  cleanups.push(() => receiver.close());
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path.join(directory, 'scratch.db')}`,
    WAGW_DATA_DIR: directory,
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: randomBytes(32).toString('hex'),
    WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${receiver.port}`,
    WAGW_SANDBOX_RECEIVES_PER_MINUTE: String(REHEARSAL_MESSAGES * 10),
    WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND: String(REHEARSAL_MESSAGES * 10),
  });
  const scratch = await createGateway(config, createLogger(config));
  cleanups.push(() => scratch.close());
  cleanups.push(() => scratch.runtime.stop());
  await scratch.runtime.startSessions();
  const app = await buildApp(scratch);
  cleanups.push(() => app.close());
  await app.ready();
  const apiKey = await scratchAccount(scratch, receiver.url);
  scratch.deliveryWorker.start();
  const messages = await rehearse(app, apiKey, deadline);
  // The delivery path warms as the deliveries go out; waiting for the last is bounded too.
  while (receiver.received() < messages.incoming && performance.now() < deadline) await pause(5);
  return { messages: messages.incoming + messages.sent, deliveries: receiver.received(), elapsedMs: performance.now() - started };
}

async function scratchAccount(scratch: Gateway, webhookUrl: string): Promise<string> {
  const account = await scratch.accounts.createAccount({ name: 'warm start', plan: 'enterprise' });
  await scratch.numbers.addNumber(operatorScope(), { accountId: account.id, phone: SCRATCH_PHONE });
  await scratch.webhooks.createWebhook(accountScope(account.id), { url: webhookUrl, eventTypes: ['message'] });
  return (await scratch.apiKeys.createKey({ accountId: account.id })).plaintext;
}

/** Alternates incoming messages and sends, a batch at a time, until the count or the deadline. */
async function rehearse(app: Awaited<ReturnType<typeof buildApp>>, apiKey: string, deadline: number) {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  let incoming = 0;
  let sent = 0;
  while (incoming + sent < REHEARSAL_MESSAGES && performance.now() < deadline) {
    const batch = Array.from({ length: REHEARSAL_CONCURRENCY }, (_, index) => {
      const receive = index % 2 === 0;
      return app.inject({
        method: 'POST',
        url: receive ? '/sandbox/receive' : '/send_message',
        headers,
        payload: receive
          ? { from_phone: OTHER_PHONE, to_phone: SCRATCH_PHONE, message: `warm ${incoming + index}` }
          : { from_phone: SCRATCH_PHONE, to_phone: OTHER_PHONE, message: `warm ${sent + index}` },
      });
    });
    for (const answer of await Promise.all(batch)) {
      if (answer.statusCode !== 200) throw new Error(`the rehearsal was answered ${answer.statusCode}: ${answer.body}`);
    }
    incoming += REHEARSAL_CONCURRENCY / 2;
    sent += REHEARSAL_CONCURRENCY / 2;
  }
  return { incoming, sent };
}

/**
 * A webhook receiver on loopback that answers every delivery 204 at once and counts them; the
 * rehearsal's, and the benchmarks' endpoint when they measure the gateway rather than a receiver.
 */
export async function startCountingReceiver(): Promise<{ port: number; url: string; received(): number; close(): Promise<void> }> {
  let received = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(204).end();
    });
  });
  // The worker's pooled connections stay open between bursts, as they would to a real endpoint.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
