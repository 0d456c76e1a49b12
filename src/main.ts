import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';
import { DispatchedNumberControl } from './http/operations/number-control.ts';
import { DispatchedChatReplies } from './http/operations/chat-replies.ts';
import { OwnerDispatch } from './http/operations/owner-dispatch.ts';
import { operationServices } from './http/operations/services.ts';
import { RemoteSandboxNetwork } from './engines/sandbox/remote-sandbox-network.ts';
import { Scheduler } from './jobs/scheduler.ts';
import { AccountActivityService } from './observability/account-activity.ts';
import { SystemStatusService } from './observability/system-status.ts';
import type { GatewayServices } from './ports/gateway-services.ts';
import { buildAccounts } from './wiring/accounts.ts';
import { buildCluster } from './wiring/cluster.ts';
import { deriveKeys } from './wiring/keys.ts';
import { buildMedia, type MediaParts } from './wiring/media.ts';
import { buildMessaging, type MessagingParts } from './wiring/messaging.ts';
import { buildSessions, type GatewayBoundaries, type SessionParts } from './wiring/sessions.ts';
import { openStorage, type StorageParts } from './wiring/storage.ts';
import { addressPolicyOf, buildWebhooks, type WebhookParts } from './wiring/webhooks.ts';

export type { GatewayBoundaries } from './wiring/sessions.ts';

/**
 * Everything the HTTP app, the CLI and the workers are built from: the services the edges are
 * handed (src/ports/gateway-services.ts), and the closing that only the root's owner may call.
 */
export interface Gateway extends GatewayServices {
  /**
   * Runs an operation on the node that serves its number, here or forwarded through the one
   * dispatch route: the public API's, and the number control of the console, the CLI and the
   * operator API (ADR 0027, 0059, 0064).
   */
  dispatch: OwnerDispatch;
  /** Flushes pending commits and closes the database. Sessions must be stopped first. */
  close(): Promise<void>;
}

export function createLogger(config: Config, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level: config.logLevel,
      // Secrets never reach the log, whichever object carries them.
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', '*.password', 'password', '*.key', 'apiKey'],
        censor: '[redacted]',
      },
    },
    destination as pino.DestinationStream | undefined,
  );
}

/**
 * The composition root: config → store → engines → services. Every entry point (the server,
 * the CLI, the tests) builds its gateway here, so there is one wiring to trust. Each module
 * builds its part from the parts before it (src/wiring/).
 */
export async function createGateway(config: Config, logger: Logger, boundaries: GatewayBoundaries = {}): Promise<Gateway> {
  const storage = await openStorage(config, boundaries);
  const keys = deriveKeys(config, logger);
  const media = buildMedia(config, storage, keys, addressPolicyOf(config), logger);
  const webhooks = buildWebhooks(config, storage, keys, media.media, logger);
  // Every periodic task of the node is timed, counted and logged here.
  const scheduler = new Scheduler(logger, storage.metrics);
  const sessions = await buildSessions(config, storage, keys, webhooks, scheduler, logger, boundaries);
  const accounts = buildAccounts(config, storage, keys, sessions, logger, boundaries);
  const messaging = buildMessaging({ config, storage, webhooks, media, sessions, numbers: accounts.numbers, logger });
  sessions.engineEvents.connect(messaging.engineEventRouting);
  const cluster = buildCluster({ config, keys, storage, webhooks, media, sessions, messaging, accounts, scheduler, logger });
  // The owner dispatch is the root's, not the HTTP app's: the CLI, which has no HTTP app, pauses,
  // resumes and restarts numbers through it too.
  const dispatch = new OwnerDispatch(
    { ...sessions, ...accounts, ...cluster },
    operationServices({ config, ...webhooks, ...media, ...sessions, ...accounts, ...messaging }),
  );
  const startedAt = new Date();
  return {
    config,
    logger,
    ...storage,
    ...webhooks,
    ...media,
    ...sessions,
    ...accounts,
    ...messaging,
    ...cluster,
    dispatch,
    numberControl: new DispatchedNumberControl(dispatch, storage.store.db),
    chatReplies: new DispatchedChatReplies(dispatch, storage.store.db),
    activity: new AccountActivityService(storage.store),
    system: new SystemStatusService(storage.store, config, startedAt),
    scheduler,
    clusterKey: keys.clusterKey,
    dashboardSigningKey: keys.dashboardSigningKey,
    startedAt,
    close: () => closeGateway(scheduler, storage, messaging, webhooks, media, sessions),
  };
}

/** Stops what the gateway runs in this process and closes its stores, last writes first. */
async function closeGateway(
  scheduler: Scheduler,
  storage: StorageParts,
  messaging: MessagingParts,
  webhooks: WebhookParts,
  media: MediaParts,
  sessions: SessionParts,
): Promise<void> {
  scheduler.stopAll();
  await messaging.queueRunner.stop();
  messaging.typing.stop();
  sessions.pauses.stop();
  await webhooks.eventStreams.stop();
  await webhooks.deliveryWorker.stop();
  webhooks.webhookClient.close();
  media.mediaFetcher.close();
  if (sessions.sandboxNetwork instanceof RemoteSandboxNetwork) sessions.sandboxNetwork.close();
  await storage.committer.drain();
  await storage.store.close();
  await storage.blobs.close();
}
