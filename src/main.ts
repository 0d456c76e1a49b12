import { createHmac } from 'node:crypto';
import { pino, type Logger } from 'pino';
import path from 'node:path';
import { AccountsService } from './accounts/accounts-service.ts';
import { ApiKeyAuthenticator } from './accounts/api-key-auth.ts';
import { ApiKeysService } from './accounts/api-keys-service.ts';
import { NumbersService } from './accounts/numbers-service.ts';
import { SignInService } from './accounts/sign-in-service.ts';
import { TeamService } from './accounts/team-service.ts';
import type { Config } from './config.ts';
import type { EngineEvents } from './engines/engine.ts';
import type { EngineKind } from './domain/model.ts';
import { EngineRegistry } from './engines/registry.ts';
import { BaileysEngine } from './engines/baileys/baileys-engine.ts';
import type { SocketFactory } from './engines/baileys/session-socket.ts';
import { SandboxEngine } from './engines/sandbox/sandbox-engine.ts';
import { MessageHistoryService } from './messaging/message-history.ts';
import { MessageActionService } from './messaging/message-actions.ts';
import { GroupService } from './messaging/groups.ts';
import { GroupChangeService } from './messaging/group-changes.ts';
import { IncomingActionService } from './messaging/incoming-actions.ts';
import { SystemStatusService } from './operations/system-status.ts';
import { GatewayMetrics } from './operations/metrics.ts';
import { ReceiveMessageService } from './messaging/receive-message.ts';
import type { BlobStore } from './media/blob-store.ts';
import { openBlobStore } from './media/open-blob-store.ts';
import { MediaFetcher } from './media/media-fetcher.ts';
import { MediaService } from './media/media-service.ts';
import { MediaAdmission } from './media/media-admission.ts';
import { DiskFloor } from './media/disk-floor.ts';
import { MediaSweeper } from './media/media-sweeper.ts';
import { MediaDownloadRetrier } from './media/media-download-retrier.ts';
import { NumberCheckService } from './messaging/number-checks.ts';
import { TypingService } from './messaging/typing.ts';
import { MediaLinks } from './media/media-links.ts';
import { SendMessageService } from './messaging/send-message.ts';
import { SendGovernor } from './messaging/governor/send-governor.ts';
import { SendQueueService } from './messaging/governor/send-queue-service.ts';
import { NEVER_HELD, QueueRunner, type SendHold } from './messaging/governor/queue-runner.ts';
import { IdempotentSendService } from './messaging/idempotent-send.ts';
import { SessionSupervisor } from './messaging/session-supervisor.ts';
import { NumberLinkingService } from './messaging/number-linking.ts';
import { SandboxInbox } from './messaging/sandbox-inbox.ts';
import { openStore, type Store } from './store/database.ts';
import { GroupCommitter } from './store/group-commit.ts';
import { migrateToLatest } from './store/migrate.ts';
import { findInboundByEngineId, findMessageById } from './store/repositories/messages.ts';
import { listPhonesOfEngine } from './store/repositories/numbers.ts';
import { deleteSandboxGroup, listSandboxGroups, saveSandboxGroup } from './store/repositories/sandbox-groups.ts';
import { LeaseKeeper } from './cluster/lease-keeper.ts';
import { NodeRuntime } from './cluster/node-runtime.ts';
import { KeyRevocationListener } from './cluster/key-revocations.ts';
import { sweepExpired } from './cluster/sweeps.ts';
import { deriveClusterKey, NodeClient } from './cluster/node-client.ts';
import { OwnerRouter } from './cluster/owner-router.ts';
import { RoutedLinking } from './cluster/routed-linking.ts';
import { SandboxNetwork, type SandboxNetworkPort } from './engines/sandbox/sandbox-network.ts';
import { RemoteSandboxNetwork } from './engines/sandbox/remote-sandbox-network.ts';
import { deriveSandboxNetworkKey } from './engines/sandbox/sandbox-network-handshake.ts';
import { loadSecretKey, SecretBox } from './secrets/secret-box.ts';
import { DeliveryWorker } from './webhooks/delivery-worker.ts';
import { WebhookHttpClient } from './webhooks/webhook-http.ts';
import { WebhooksService } from './webhooks/webhooks-service.ts';
import { WriteFailures } from './store/write-failures.ts';

/** Everything the HTTP app, the CLI and the workers are built from. */
export interface Gateway {
  config: Config;
  logger: Logger;
  store: Store;
  committer: GroupCommitter;
  /** The latest failure of the database to take a write, for /health. */
  writeFailures: WriteFailures;
  supervisor: SessionSupervisor;
  /** Linking attempts started from the operator console. */
  linking: NumberLinkingService;
  /** This node's leases on numbers (docs/cluster.md). */
  keeper: LeaseKeeper;
  /** Starts and stops the node's background work: leases and sessions, deliveries, sweeps. */
  runtime: NodeRuntime;
  /** The simulated network the sandbox engine's sessions connect to. */
  sandboxNetwork: SandboxNetworkPort;
  accounts: AccountsService;
  numbers: NumbersService;
  apiKeys: ApiKeysService;
  authenticator: ApiKeyAuthenticator;
  sender: SendMessageService;
  /** The per-number send governor: policies, and the decision of when a message may leave. */
  governor: SendGovernor;
  /** Runs the send queues of the numbers this node owns; started by the node runtime. */
  queueRunner: QueueRunner;
  /** Send policies, and the numbers' queues as the API shows and changes them. */
  sendQueues: SendQueueService;
  /** Sends that carry an Idempotency-Key. */
  idempotentSender: IdempotentSendService;
  receiver: ReceiveMessageService;
  /** Simulated incoming messages on sandbox numbers, from the API and the dashboard. */
  sandboxInbox: SandboxInbox;
  webhooks: WebhooksService;
  signIn: SignInService;
  team: TeamService;
  history: MessageHistoryService;
  system: SystemStatusService;
  /** The Prometheus metrics that GET /metrics serves (when a metrics token is configured). */
  metrics: GatewayMetrics;
  /** Signs and checks the calls nodes make to each other; derived from the secret key. */
  clusterKey: Buffer;
  /** Calls to other nodes, signed with the cluster key and bounded in time. */
  nodeClient: NodeClient;
  /** Runs a request for a number on the node that serves it (forwarding when that is another). */
  router: OwnerRouter;
  /** The console's linking and restarts, served by the number's owner from any node. */
  routedLinking: RoutedLinking;
  /** Keys the dashboard's CSRF tokens; derived from the secret key, so it survives restarts. */
  dashboardSigningKey: Buffer;
  /** Media files: uploads, the files messages carry, and their bytes in the blob store. */
  media: MediaService;
  /** Media retention, and bytes no row needs. */
  mediaSweeper: MediaSweeper;
  /** POST /check_numbers, with its per-number lookup limit. */
  numberChecks: NumberCheckService;
  /** POST /typing, whose states end by themselves. */
  typing: TypingService;
  /** Reactions, edits, revocations and read marks on the account's messages. */
  messageActions: MessageActionService;
  /** Groups as each number sees them. */
  groups: GroupService;
  /** Incoming files whose first download failed, tried again. */
  mediaRetrier: MediaDownloadRetrier;
  /** Where media bytes are kept: the filesystem or an S3 bucket (WAGW_MEDIA_STORE). */
  blobs: BlobStore;
  /** Signed download links, which need no API key. */
  mediaLinks: MediaLinks;
  /** Sends webhook deliveries; started by the node runtime only, never by the CLI. */
  deliveryWorker: DeliveryWorker;
  startedAt: Date;
  /** The migrations this start applied (empty when the schema was already current). */
  appliedMigrations: string[];
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

/** What a test may swap at the composition root: only the boundary we cannot reach. */
export interface GatewayBoundaries {
  /** Stands in for WhatsApp's servers behind the Baileys engine. */
  baileysSocketFactory?: SocketFactory;
}

/**
 * The composition root: config → store → engines → services. Every entry point (the server,
 * the CLI, the tests) builds its gateway here, so there is one wiring to trust.
 */
export async function createGateway(config: Config, logger: Logger, boundaries: GatewayBoundaries = {}): Promise<Gateway> {
  const store = openStore(config.database);
  let appliedMigrations: string[];
  let blobs: BlobStore;
  try {
    await store.assertDurable();
    appliedMigrations = await migrateToLatest(store.db, store.dialect);
    blobs = await openBlobStore(config.media);
  } catch (error) {
    await store.close();
    throw error;
  }
  // PostgreSQL commits a few batches side by side, leaving pool connections for reads.
  const concurrentBatches = config.database.dialect === 'postgres' ? Math.max(1, Math.floor(config.database.poolSize / 2)) : 1;
  const writeFailures = new WriteFailures();
  const committer = new GroupCommitter(store.db, config.groupCommit.maxBatchSize, concurrentBatches, config.groupCommit.enabled, writeFailures);
  const metrics = new GatewayMetrics(store, {
    processMetrics: config.metrics.token !== undefined,
    volumes: { data: config.database.dialect === 'sqlite' ? path.dirname(config.database.path) : config.dataDirectory, media: config.media.directory },
  });
  const secretKey = loadSecretKey(config.secretKey, config.dataDirectory, logger);
  const secretBox = new SecretBox(secretKey);
  const addressPolicy = { everything: config.webhooks.allowPrivateAddresses, hosts: config.webhooks.allowedPrivateHosts };
  const webhookClient = new WebhookHttpClient({
    timeoutMs: config.webhooks.timeoutMs,
    addressPolicy,
    userAgent: `wa-gateway/${config.version}`,
  });
  const deliveryWorker = new DeliveryWorker({
    store,
    committer,
    client: webhookClient,
    secretBox,
    config: config.webhooks,
    logger,
    onAttempt: (state, durationSeconds) => metrics.webhookAttempted(state, durationSeconds),
    onStarted: (source) => metrics.webhookStarted(source),
  });
  const keeper = new LeaseKeeper(
    store,
    { ttlMs: config.cluster.leaseTtlMs, maxSessions: config.cluster.maxSessionsPerNode, nodeName: config.cluster.nodeName, nodeUrl: config.cluster.nodeUrl },
    logger,
  );
  const mediaFetcher = new MediaFetcher({
    addressPolicy,
    connectTimeoutMs: config.media.fetchConnectTimeoutMs,
    idleTimeoutMs: config.media.fetchIdleTimeoutMs,
    largestFileBytes: Math.max(...Object.values(config.media.limits)),
    userAgent: `wa-gateway/${config.version}`,
  });
  const diskFloor = new DiskFloor({
    // The media directory, and the database's own disk, which must never be the one to fill.
    directories: [config.media.directory, ...(config.database.dialect === 'sqlite' ? [path.dirname(config.database.path)] : [])],
    minFreeBytes: config.media.minFreeBytes,
    minFreePercent: config.media.minFreePercent,
  });
  const media = new MediaService(store, blobs, config.media, mediaFetcher, new MediaAdmission(store, config.media.allowances, diskFloor));
  const mediaSweeper = new MediaSweeper(store, blobs, logger);
  let lastOrphanSweep = 0;
  const mediaLinks = new MediaLinks(MediaLinks.deriveKey(secretKey), config.publicUrl);
  const incomingActions = new IncomingActionService(store, committer, deliveryWorker);
  const receiver = new ReceiveMessageService(store, committer, deliveryWorker, media, mediaLinks, config.media.receiveTimeoutMs, (error) => supervisor!.staleWriteRefused(error));

  // The supervisor needs the engines and the engines report to the supervisor; the events
  // object closes over a variable so that both can be built in one pass.
  let supervisor: SessionSupervisor | undefined;
  let groupChanges: GroupChangeService | undefined;
  const events: EngineEvents = {
    incomingMessage: (event) => receiver.receive(event),
    sessionStatusChanged: (event) => supervisor!.recordSessionStatus(event),
    receipt: (event) => receiver.recordReceipt(event),
    incomingAction: (event) => incomingActions.record(event),
    groupChanged: (event) => groupChanges!.record(event),
  };
  // Each engine gets its own view of the events, so that what it receives is counted under its name.
  const eventsFrom = (engine: EngineKind): EngineEvents => ({
    ...events,
    incomingMessage: async (event) => {
      const message = await receiver.receive(event);
      metrics.messageReceived(engine);
      return message;
    },
  });
  const shared = config.cluster.sandboxNetwork;
  const sandboxNetwork =
    shared === null
      ? await embeddedSandboxNetwork(store)
      : new RemoteSandboxNetwork({ ...shared, key: deriveSandboxNetworkKey(secretKey), maxLineBytes: config.cluster.sandboxNetworkMaxLineBytes }, logger);
  const sandbox = new SandboxEngine({
    events: eventsFrom('sandbox'),
    network: sandboxNetwork,
    nodeId: keeper.nodeId,
    // Read back whole, with the group chat a simulated group message was written in.
    findReceived: async (numberId, engineMessageId) => {
      const received = await findInboundByEngineId(store.db, numberId, engineMessageId);
      return received && findMessageById(store.db, received.id);
    },
    listSandboxPhones: () => listPhonesOfEngine(store.db, 'sandbox'),
  });
  const baileys = new BaileysEngine({
    store,
    secretBox,
    events: eventsFrom('baileys'),
    logger,
    pacing: { minimumGapMs: config.baileys.sendGapMs, jitterMs: config.baileys.sendJitterMs },
    version: config.baileys.webVersion,
    socketFactory: boundaries.baileysSocketFactory,
  });
  supervisor = new SessionSupervisor(store, new EngineRegistry([sandbox, baileys]), committer, deliveryWorker, logger, keeper, metrics);
  const accounts = new AccountsService(store);
  const authenticator = new ApiKeyAuthenticator(store, logger);
  const linking = new NumberLinkingService(supervisor, logger);
  const groups = new GroupService(store, supervisor);
  groupChanges = new GroupChangeService(store, committer, deliveryWorker, groups);
  const governor = new SendGovernor(store, committer, config.governor);
  // What pauses a number's queue whatever its policy (a restriction by WhatsApp); nothing yet.
  const sendHold: SendHold = NEVER_HELD;
  const sender = new SendMessageService(store, committer, supervisor, deliveryWorker, media, groups, logger, governor);
  const typing = new TypingService(supervisor, logger, config.typingMs);
  const queueRunner = new QueueRunner(store, keeper, supervisor, governor, sender, sendHold, typing, metrics, logger, { idleCheckMs: config.governor.queueCheckMs, batchSize: 500 });
  const messageActions = new MessageActionService(store, committer, supervisor);
  receiver.readAutomatically = (number, message) => messageActions.markRead(number, message);
  const mediaRetrier = new MediaDownloadRetrier(store, committer, deliveryWorker, media, mediaLinks, supervisor, logger);
  const numbers = new NumbersService(store, supervisor);
  const startedAt = new Date();
  const idempotentSender = new IdempotentSendService(store, committer, sender, logger, config.interruptedSendAfterMs);
  const signIn = new SignInService(
    store,
    { idleTimeoutMs: config.dashboard.sessionIdleTimeoutMs, absoluteTimeoutMs: config.dashboard.sessionAbsoluteTimeoutMs },
    createHmac('sha256', secretKey).update('wa-gateway sign-in throttle').digest(),
  );
  const clusterKey = deriveClusterKey(secretKey);
  const nodeClient = new NodeClient(clusterKey, config.cluster.nodeCallTimeoutMs);
  const router = new OwnerRouter(supervisor, config.cluster.ownerWaitMs, nodeClient);
  const runtime = new NodeRuntime(
    config,
    store,
    {
      keeper,
      sessionsStarted: () => supervisor!.sessionsStarted(),
      deliveryWorker,
      queueRunner,
      stopLinking: () => linking.stopAll(),
      revocations: new KeyRevocationListener(
        config.database.dialect === 'postgres' ? config.database.connectionString : undefined,
        { keyRevoked: (keyId) => authenticator.forget(keyId), missedSignals: () => authenticator.forgetAll(), leasesReleased: () => void keeper.tickSoon() },
        logger,
      ),
      sweep: async () => {
        await sweepExpired(sender, idempotentSender, signIn, config.interruptedSendAfterMs, logger);
        await mediaSweeper.sweepExpired().catch((error: unknown) => logger.error({ err: error }, 'could not sweep expired media'));
        await mediaRetrier.runDue().catch((error: unknown) => logger.error({ err: error }, 'could not retry incoming files'));
        // Orphans need every blob listed, so they are looked for once an hour.
        if (Date.now() - lastOrphanSweep >= 3_600_000) {
          lastOrphanSweep = Date.now();
          await mediaSweeper.sweepOrphans().catch((error: unknown) => logger.error({ err: error }, 'could not sweep orphaned media'));
        }
      },
    },
    logger,
  );

  return {
    config,
    logger,
    store,
    committer,
    writeFailures,
    supervisor,
    linking,
    keeper,
    runtime,
    sandboxNetwork,
    accounts,
    numbers,
    apiKeys: new ApiKeysService(store, config.apiKeyPrefix, (keyId) => authenticator.forget(keyId)),
    authenticator,
    sender,
    governor,
    queueRunner,
    sendQueues: new SendQueueService(store, governor, sender, keeper),
    idempotentSender,
    receiver,
    media,
    mediaSweeper,
    mediaRetrier,
    numberChecks: new NumberCheckService(supervisor, config.numberChecksPerMinute),
    typing,
    messageActions,
    groups,
    blobs,
    mediaLinks,
    sandboxInbox: new SandboxInbox(store, numbers, supervisor, config.maxMessageLength, config.sandbox.receivesPerMinute, groups),
    webhooks: new WebhooksService(store, committer, secretBox, deliveryWorker, addressPolicy, config.webhooks.maxPerAccount),
    signIn,
    team: new TeamService(store, accounts),
    history: new MessageHistoryService(store),
    system: new SystemStatusService(store, config, startedAt),
    metrics,
    clusterKey,
    router,
    nodeClient,
    routedLinking: new RoutedLinking(linking, supervisor, router, nodeClient),
    dashboardSigningKey: createHmac('sha256', secretKey).update('wa-gateway dashboard csrf').digest(),
    deliveryWorker,
    startedAt,
    appliedMigrations,
    async close() {
      await queueRunner.stop();
      typing.stop();
      await deliveryWorker.stop();
      if (sandboxNetwork instanceof RemoteSandboxNetwork) sandboxNetwork.close();
      await committer.drain();
      await store.close();
      await blobs.close();
    },
  };
}

/** The simulated network in this process, with its groups kept in the gateway's database between runs. */
async function embeddedSandboxNetwork(store: Store): Promise<SandboxNetwork> {
  const network = new SandboxNetwork(undefined, undefined, {
    load: () => listSandboxGroups(store.db),
    save: (record) => saveSandboxGroup(store.db, record, new Date()),
    remove: (id) => deleteSandboxGroup(store.db, id),
  });
  await network.restoreGroups();
  return network;
}
