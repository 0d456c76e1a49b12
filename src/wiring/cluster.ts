import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { KeyRevocationListener } from '../cluster/key-revocations.ts';
import { NodeClient } from '../cluster/node-client.ts';
import { NodeRuntime } from '../cluster/node-runtime.ts';
import { OwnerRouter } from '../cluster/owner-router.ts';
import { registerSweeps } from '../cluster/sweeps.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import type { AccountParts } from './accounts.ts';
import type { MediaParts } from './media.ts';
import type { MessagingParts } from './messaging.ts';
import type { SessionParts } from './sessions.ts';
import type { StorageParts } from './storage.ts';
import type { WebhookParts } from './webhooks.ts';
import type { GatewayKeys } from './keys.ts';

export interface ClusterParts {
  /** Calls to other nodes, signed with the cluster key and bounded in time. */
  nodeClient: NodeClient;
  /** Runs a request for a number on the node that serves it (forwarding when that is another). */
  router: OwnerRouter;
  /** Starts and stops the node's background work: leases and sessions, deliveries, sweeps. */
  runtime: NodeRuntime;
}

interface ClusterInputs {
  config: Config;
  keys: GatewayKeys;
  storage: StorageParts;
  webhooks: WebhookParts;
  media: MediaParts;
  sessions: SessionParts;
  messaging: MessagingParts;
  accounts: AccountParts;
  scheduler: Scheduler;
  logger: Logger;
}

/** How this node reaches the others, and the runtime that starts and stops its background work. */
export function buildCluster({
  config,
  keys,
  storage,
  webhooks,
  media,
  sessions,
  messaging,
  accounts,
  scheduler,
  logger,
}: ClusterInputs): ClusterParts {
  const { keeper, supervisor } = sessions;
  const nodeClient = new NodeClient(keys.clusterKey, config.cluster.nodeCallTimeoutMs);
  const router = new OwnerRouter(supervisor, config.cluster.ownerWaitMs, nodeClient, config.database.dialect === 'sqlite');
  const { authenticator } = accounts;
  const revocations = new KeyRevocationListener(
    config.database.dialect === 'postgres' ? config.database.connectionString : undefined,
    {
      keyRevoked: (keyId) => authenticator.forget(keyId),
      missedSignals: () => {
        authenticator.forgetAll();
        storage.store.lookups.forgetAll();
      },
      leasesReleased: () => void keeper.tickSoon(),
      other: (payload) => void storage.store.lookups.heard(payload),
    },
    logger,
  );
  const swept = { ...messaging, signIn: accounts.signIn, mediaSweeper: media.mediaSweeper };
  const runtime = new NodeRuntime(
    config,
    storage.store,
    {
      keeper,
      sessionsStarted: () => supervisor.sessionsStarted(),
      deliveryWorker: webhooks.deliveryWorker,
      eventStreams: webhooks.eventStreams,
      queueRunner: messaging.queueRunner,
      stopLinking: () => messaging.linking.stopAll(),
      revocations,
      sweeps: registerSweeps(scheduler, swept, config.interruptedSendAfterMs, logger),
    },
    logger,
    scheduler,
  );
  return {
    nodeClient,
    router,
    runtime,
  };
}
