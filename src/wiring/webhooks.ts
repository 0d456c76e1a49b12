import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { AddressPolicy } from '../webhooks/address-guard.ts';
import { AmqpPublisher } from '../webhooks/amqp-publisher.ts';
import { ChatwootApi } from '../webhooks/chatwoot-api.ts';
import { ChatwootCallbacks } from '../webhooks/chatwoot-callbacks.ts';
import { ChatwootRelay, type ChatwootMediaReader } from '../webhooks/chatwoot-relay.ts';
import type { MediaService } from '../media/media-service.ts';
import { AppError } from '../domain/errors.ts';
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
  /** Reads Chatwoot inboxes' callbacks: an agent's reply to send (ADR 0067). */
  chatwootCallbacks: ChatwootCallbacks;
  webhooks: WebhooksService;
}

/** Which private addresses outbound fetches may reach: webhooks, sinks, Chatwoot and media URLs alike. */
export function addressPolicyOf(config: Config): AddressPolicy {
  return { everything: config.webhooks.allowPrivateAddresses, hosts: config.webhooks.allowedPrivateHosts };
}

/** Webhook endpoints, and the worker that delivers their events over the SSRF-guarded client. */
export function buildWebhooks(config: Config, storage: StorageParts, keys: GatewayKeys, media: MediaService, logger: Logger): WebhookParts {
  const { store, committer, metrics } = storage;
  const addressPolicy = addressPolicyOf(config);
  const userAgent = `wa-gateway/${config.version}`;
  const client = new WebhookHttpClient({ timeoutMs: config.webhooks.timeoutMs, addressPolicy, userAgent });
  const amqp = new AmqpPublisher({ timeoutMs: config.webhooks.timeoutMs, addressPolicy });
  const eventStreams: EventStreams = new EventStreams(store, logger, (count) => streamedEvents(count));
  const streamedEvents = metrics.watchEventStreams(() => eventStreams.connected);
  const chatwoot = new ChatwootRelay({
    store,
    api: new ChatwootApi({ addressPolicy, timeoutMs: config.webhooks.timeoutMs, userAgent }),
    readMedia: chatwootMediaReader(media),
    timeoutMs: config.webhooks.timeoutMs,
    logger,
  });
  const deliveryWorker = new DeliveryWorker({
    store,
    committer,
    client,
    amqp,
    chatwoot,
    secretBox: keys.secretBox,
    config: config.webhooks,
    logger,
    onAttempt: (state, durationSeconds, lagSeconds) => metrics.webhookAttempted(state, durationSeconds, lagSeconds),
    onStarted: (source) => metrics.webhookStarted(source),
    // A stream's deliveries committed here are sent by its connection at once, not at its next poll.
    onQueued: () => eventStreams.wake(),
  });
  const webhooks = new WebhooksService(store, committer, keys.secretBox, deliveryWorker, addressPolicy, config.webhooks.maxPerAccount);
  const chatwootCallbacks = new ChatwootCallbacks(store, keys.secretBox, deliveryWorker);
  return { addressPolicy, webhookClient: client, deliveryWorker, eventStreams, webhooks, chatwootCallbacks };
}

/** A stored file's bytes for a Chatwoot message; one whose retention ended is left out. */
function chatwootMediaReader(media: MediaService): ChatwootMediaReader {
  return async (accountId, mediaId) => {
    try {
      const found = await media.find(accountId, mediaId);
      return { bytes: await media.readAll(found), mimeType: found.mimeType, fileName: found.fileName ?? `${found.kind}-${found.id}` };
    } catch (error) {
      // Anything else (the database, the blob store) fails the attempt, which is retried.
      if (error instanceof AppError && error.code === 'media_not_found') return undefined;
      throw error;
    }
  };
}
