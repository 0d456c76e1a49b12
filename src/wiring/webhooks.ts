import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { AddressPolicy } from '../webhooks/address-guard.ts';
import { AmqpPublisher } from '../webhooks/amqp-publisher.ts';
import { DeliveryWorker } from '../webhooks/delivery-worker.ts';
import { EventStreams } from '../webhooks/event-streams.ts';
import { WebhookHttpClient } from '../webhooks/webhook-http.ts';
import { WebhooksService } from '../webhooks/webhooks-service.ts';
import type { GatewayKeys } from './keys.ts';
import type { StorageParts } from './storage.ts';

export interface WebhookParts {
  /** Which private addresses outbound fetches (webhooks, media URLs) may reach. */
  addressPolicy: AddressPolicy;
  /** The pooled, SSRF-guarded HTTP client deliveries go out through. */
  webhookClient: WebhookHttpClient;
  /** Sends webhook deliveries; started by the node runtime only, never by the CLI. */
  deliveryWorker: DeliveryWorker;
  /** The event streams whose WebSocket clients this node serves (ADR 0068). */
  eventStreams: EventStreams;
  webhooks: WebhooksService;
}

/** Webhook endpoints, and the worker that delivers their events over the SSRF-guarded client. */
export function buildWebhooks(config: Config, storage: StorageParts, keys: GatewayKeys, logger: Logger): WebhookParts {
  const { store, committer, metrics } = storage;
  const addressPolicy = { everything: config.webhooks.allowPrivateAddresses, hosts: config.webhooks.allowedPrivateHosts };
  const client = new WebhookHttpClient({ timeoutMs: config.webhooks.timeoutMs, addressPolicy, userAgent: `wa-gateway/${config.version}` });
  const amqp = new AmqpPublisher({ timeoutMs: config.webhooks.timeoutMs, addressPolicy });
  const eventStreams = new EventStreams(store, logger);
  const deliveryWorker = new DeliveryWorker({
    store,
    committer,
    client,
    amqp,
    secretBox: keys.secretBox,
    config: config.webhooks,
    logger,
    onAttempt: (state, durationSeconds, lagSeconds) => metrics.webhookAttempted(state, durationSeconds, lagSeconds),
    onStarted: (source) => metrics.webhookStarted(source),
    // A stream's deliveries committed here are sent by its connection at once, not at its next poll.
    onQueued: () => eventStreams.wake(),
  });
  const webhooks = new WebhooksService(store, committer, keys.secretBox, deliveryWorker, addressPolicy, config.webhooks.maxPerAccount);
  return { addressPolicy, webhookClient: client, deliveryWorker, eventStreams, webhooks };
}
