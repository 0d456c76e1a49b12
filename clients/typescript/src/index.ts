import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components, paths, webhooks } from './schema.js';

/** Every model, request and webhook event of the API by its own name: Message, Group, MessageEvent… */
export type * from './schema.js';
/** The scope an API key needs for each operation (403 missing_scope without it). */
export { requiredScopes, type ApiKeyScope } from './scopes.js';

/**
 * The send's answers as the client hands them over. openapi-fetch's answer types leave out a
 * property whose only type is null (a direct send's `group`, a group send's `to_phone`), so the
 * models as the document writes them could not hold the client's own answers; these can, and
 * `status !== 'queued'` tells a waiting message from one that left or ended.
 */
type AnsweredKeys<T> = { [K in keyof T]-?: [NonNullable<T[K]>] extends [never] ? never : K }[keyof T];
type Readable<T> = T extends (infer Item)[]
  ? Readable<Item>[]
  : T extends object
    ? { [K in keyof Pick<T, AnsweredKeys<T>>]: Readable<Pick<T, AnsweredKeys<T>>[K]> }
    : T;
export type DirectSentMessage = Readable<components['schemas']['DirectSentMessage']>;
export type GroupSentMessage = Readable<components['schemas']['GroupSentMessage']>;
export type SentMessage = Readable<components['schemas']['SentMessage']>;
export type QueuedMessage = Readable<components['schemas']['QueuedMessage']>;
export type UnsentMessage = Readable<components['schemas']['UnsentMessage']>;
export type QueuedAnswer = Readable<components['schemas']['QueuedAnswer']>;

/** The error envelope every 4xx and 5xx answers with. */
export type ApiError = components['schemas']['Error'];

/** A typed client of the whole API: `client.POST('/send_message', { body })`. */
export type GatewayClient = Client<paths>;

export interface GatewayClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the gateway answers, e.g. https://wa.example.com. */
  baseUrl: string;
  /** An API key of your account; sent as `Authorization: Bearer <key>`. */
  apiKey: string;
}

export function createGatewayClient({ apiKey, ...options }: GatewayClientOptions): GatewayClient {
  const client = createClient<paths>(options);
  client.use({
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${apiKey}`);
      return request;
    },
  });
  return client;
}

export interface OperatorClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the gateway answers, e.g. https://wa.example.com. */
  baseUrl: string;
  /** An operator token (wagw_op_…, from `wagw operator-token create`); sent as `Authorization: Bearer <token>`. */
  token: string;
}

/**
 * A typed client of the operator API (the `operator` tag, under /admin): the same paths as the
 * gateway client, called with an operator token instead of an API key.
 */
export function createOperatorClient({ token, ...options }: OperatorClientOptions): GatewayClient {
  return createGatewayClient({ ...options, apiKey: token });
}

/** Any delivery a webhook receives, told apart by `event`. */
export type WebhookEvent = {
  [Name in keyof webhooks]: NonNullable<webhooks[Name]['post']>['requestBody']['content']['application/json'];
}[keyof webhooks];

const eventNames = [
  'message',
  'message.media',
  'message.status',
  'message.reaction',
  'message.edited',
  'message.revoked',
  'session.status',
  'group.updated',
  'number.paused',
  'number.resumed',
  'number.capped',
  'contact.identity',
  'call',
  'presence.update',
  'poll.vote',
  'test',
] as const satisfies readonly WebhookEvent['event'][];
// Fails to compile when the API adds an event this list lacks.
const everyEventListed: Exclude<WebhookEvent['event'], (typeof eventNames)[number]> extends never ? true : false = true;
const knownEvents = new Set<unknown>(everyEventListed ? eventNames : []);

function isWebhookEvent(value: unknown): value is WebhookEvent {
  return typeof value === 'object' && value !== null && 'event' in value && knownEvents.has(value.event);
}

/** The request headers a delivery is signed with, as any HTTP server gives them. */
export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

/**
 * Checks a delivery's Standard Webhooks signature (webhook-id, webhook-timestamp,
 * webhook-signature) against the webhook's secret, and answers its event. Throws
 * `WebhookVerificationError` for a delivery that is not the gateway's, altered, or too old.
 * Pass the body exactly as received: a re-serialized object no longer matches its signature.
 */
export function verifyWebhook(secret: string, body: string | Buffer, headers: WebhookHeaders): WebhookEvent {
  const event: unknown = new Webhook(secret).verify(body, signatureHeaders(headers));
  if (!isWebhookEvent(event))
    throw new WebhookVerificationError(`A signed delivery of an unknown event: ${JSON.stringify(event).slice(0, 100)}`);
  return event;
}

function signatureHeaders(headers: WebhookHeaders): Record<string, string> {
  const read = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    return Array.isArray(value) ? value.join(' ') : (value ?? '');
  };
  return {
    'webhook-id': read('webhook-id'),
    'webhook-timestamp': read('webhook-timestamp'),
    'webhook-signature': read('webhook-signature'),
  };
}

export { WebhookVerificationError };
