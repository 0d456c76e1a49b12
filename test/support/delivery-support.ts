import { accountScope, operatorScope } from '../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { DeliveryWithAttempts } from '../../src/webhooks/webhooks-service.ts';
import type { Dialect } from './databases.ts';
import { startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from './gateway.ts';
import type { ReceivedRequest, WebhookReceiver } from './webhook-receiver.ts';
import { waitForValue } from './waiting.ts';

export const ISO_UTC_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The receivers listen on 127.0.0.1, which the SSRF guard refuses unless private addresses are
 * allowed. The short schedule and poll keep every wait in these tests to a second or two.
 */
export function webhookEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    WAGW_WEBHOOK_ALLOW_PRIVATE: 'true',
    WAGW_WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2',
    // Far longer than a busy machine takes to answer: an answer late only because of load must not
    // count as a timeout. Tests of the timeout itself set their own.
    WAGW_WEBHOOK_TIMEOUT_MS: '30000',
    WAGW_WEBHOOK_POLL_INTERVAL_MS: '50',
    ...overrides,
  };
}

/** A test gateway whose delivery worker runs, as it does in the server. */
export async function startDeliveringGateway(dialect: Dialect, env: Record<string, string>): Promise<TestGateway> {
  const test = await startTestGateway(dialect, env);
  test.gateway.deliveryWorker.start();
  return test;
}

export { sleep } from './waiting.ts';

/** Polls until `probe` returns something other than undefined (test/support/waiting.ts). */
export function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  return waitForValue(probe, what, 20);
}

function headerRecord(request: ReceivedRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** The payload, after checking the request's signature the way a receiver would. */
export function verifiedPayload(request: ReceivedRequest, secret: string): Record<string, unknown> {
  return new StandardWebhook(secret).verify(request.body, headerRecord(request)) as Record<string, unknown>;
}

export function payloadOf(request: ReceivedRequest): Record<string, unknown> {
  return JSON.parse(request.body) as Record<string, unknown>;
}

/** Requests to one receiver path (one webhook's), that also `match`. */
export function onPath(path: string, match: (request: ReceivedRequest) => boolean = () => true): (request: ReceivedRequest) => boolean {
  return (request) => request.path === path && match(request);
}

export function isEvent(event: string): (request: ReceivedRequest) => boolean {
  return (request) => payloadOf(request).event === event;
}

/** Simulates an incoming message on one of the account's sandbox numbers; returns the API's answer. */
export async function receiveIncoming(
  test: TestGateway,
  account: SeededAccount,
  message: string,
  fromPhone: string = uniquePhone(),
): Promise<Record<string, string>> {
  const response = await test.post('/sandbox/receive', { from_phone: fromPhone, to_phone: account.phones[0], message }, account.apiKey);
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as Record<string, string>;
}

/** The webhook's only delivery, once `ready` holds for it. */
export async function onlyDelivery(
  test: TestGateway,
  webhookId: string,
  ready: (entry: DeliveryWithAttempts) => boolean,
): Promise<DeliveryWithAttempts> {
  return eventually(async () => {
    const entries = await test.gateway.webhooks.listDeliveries(operatorScope(), webhookId);
    assert.ok(entries.length <= 1, `expected one delivery for ${webhookId}, found ${entries.length}`);
    return entries[0] !== undefined && ready(entries[0]) ? entries[0] : undefined;
  }, `the delivery of ${webhookId} to settle`);
}

/**
 * How long after the worker began a delivery's first attempt its retry reached the receiver. The
 * retry is due its delay after that start, by the worker's clock, so this never falls short of the
 * delay however late the first request reached the receiver on a loaded machine; the gap between
 * the two arrivals can, which made the test of a short Retry-After fail now and then under load.
 */
export async function retryGapMs(test: TestGateway, webhookId: string, retry: ReceivedRequest): Promise<number> {
  const { attempts } = await onlyDelivery(test, webhookId, (entry) => entry.attempts.length >= 1);
  return retry.receivedAt - Math.min(...attempts.map((attempt) => attempt.attemptedAt.getTime()));
}

let hookPathCounter = 0;

/**
 * A webhook of the account on a path of its own at the receiver, so that tests sharing one
 * receiver never see each other's requests.
 */
export async function subscribeFresh(test: TestGateway, receiver: WebhookReceiver, accountId: string, eventTypes: string[]) {
  hookPathCounter += 1;
  const path = `/hook-${hookPathCounter}`;
  const created = await test.gateway.webhooks.createWebhook(accountScope(accountId), { url: receiver.url(path), eventTypes });
  return { ...created, path };
}
