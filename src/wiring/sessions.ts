import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { LeaseKeeper } from '../cluster/lease-keeper.ts';
import { BAILEYS_ENGINE } from '../engines/baileys/descriptor.ts';
import type { SessionTimings } from '../engines/baileys/baileys-session.ts';
import type { SocketFactory } from '../engines/baileys/session-socket.ts';
import { EngineRegistry, onDemand } from '../engines/registry.ts';
import { CloudEngine, type CloudCallbacks } from '../engines/cloud/cloud-engine.ts';
import { declineMissing } from '../engines/session-binding.ts';
import { GraphApi } from '../engines/cloud/graph-api.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import { RemoteSandboxNetwork } from '../engines/sandbox/remote-sandbox-network.ts';
import { SandboxEngine } from '../engines/sandbox/sandbox-engine.ts';
import { SandboxNetwork, type SandboxNetworkPort } from '../engines/sandbox/sandbox-network.ts';
import { EngineEventDispatch } from '../messaging/engine-event-routing.ts';
import { NumberPauses } from '../messaging/number-pauses.ts';
import { NewChatCaps } from '../messaging/new-chat-caps.ts';
import { SessionSupervisor } from '../messaging/session-supervisor.ts';
import { StaleWrites } from '../messaging/stale-writes.ts';
import type { Store, StoreBoundaries } from '../store/database.ts';
import { findWholeInboundByEngineId } from '../store/repositories/messages.ts';
import { listPhonesOfEngine } from '../store/repositories/numbers.ts';
import { deleteSandboxGroup, listSandboxGroups, saveSandboxGroup } from '../store/repositories/sandbox-groups.ts';
import type { GatewayKeys } from './keys.ts';
import type { StorageParts } from './storage.ts';
import type { WebhookParts } from './webhooks.ts';

/** What a test may swap at the composition root: only the boundary we cannot reach. */
/** What the process that builds the gateway may choose in code, never by configuration. */
export interface GatewayBoundaries extends StoreBoundaries {
  /** Stands in for WhatsApp's servers behind the Baileys engine. */
  baileysSocketFactory?: SocketFactory;
  /**
   * The Baileys sessions' reconnect backoff and watchdog, the engine's own unless set. Tests that
   * close a fake socket set a short backoff, so that its reconnect comes in milliseconds, not 2 s.
   */
  baileysTimings?: Partial<SessionTimings>;
  /**
   * The scrypt cost (log2 N) of new password hashes and of the unknown-email decoy; OWASP's 17
   * unless set. Tests set a cheap one, so that a suite of sign-ins takes seconds, not minutes.
   */
  passwordCostLog2?: number;
  /**
   * How long a sandbox send waits for a live recipient of this process's network to store the
   * message before it is answered anyway (the network's 2 s unless set). A test that reads the
   * recipient's copy waits for it whatever this is (test/support/gateway.ts, receivedMessage);
   * one that sends to a number that is away sets a short wait, so as not to wait out 2 s.
   */
  sandboxDeliveryWaitMs?: number;
}

export interface SessionParts {
  /** This node's leases on numbers (docs/cluster.md). */
  keeper: LeaseKeeper;
  supervisor: SessionSupervisor;
  /** Which numbers hold their sends (paused), and why. */
  pauses: NumberPauses;
  /** WhatsApp's cap on each number's new chats, and the hold a 475 puts on its first contacts. */
  newChatCaps: NewChatCaps;
  /** The simulated network the sandbox engine's sessions connect to. */
  sandboxNetwork: SandboxNetworkPort;
  /** Where the engines' events go, once the services that consume them are built. */
  engineEvents: EngineEventDispatch;
  /** Meta's signed callbacks for Cloud API numbers, handed to the engine that checks and reports them. */
  cloudCallbacks: CloudCallbacks;
}

/** The lease keeper, both engines, the supervisor that runs each number's session on its owner, and the numbers' pauses. */
export async function buildSessions(
  config: Config,
  storage: StorageParts,
  keys: GatewayKeys,
  webhooks: WebhookParts,
  scheduler: Scheduler,
  logger: Logger,
  boundaries: GatewayBoundaries,
): Promise<SessionParts> {
  const { store, committer, metrics } = storage;
  const { nodeName, nodeUrl, leaseTtlMs, maxSessionsPerNode, handoverDrainMs, sessionStartsPerSecond } = config.cluster;
  const keeper = new LeaseKeeper(
    store,
    { ttlMs: leaseTtlMs, maxSessions: maxSessionsPerNode, nodeName, nodeUrl, drainMs: handoverDrainMs, sessionStartsPerSecond },
    logger,
    scheduler,
  );
  const staleWrites = new StaleWrites(keeper, logger, metrics);
  const pauses = new NumberPauses({
    store,
    committer,
    notifier: webhooks.deliveryWorker,
    logger,
    leaseOf: (numberId) => keeper.leaseOf(numberId),
    staleWriteRefused: (error) => staleWrites.refused(error),
  });
  const newChatCaps = new NewChatCaps({
    store,
    committer,
    notifier: webhooks.deliveryWorker,
    logger,
    staleWriteRefused: (error) => staleWrites.refused(error),
    readFailed: () => metrics.newChatQuotaReadFailed(),
  });
  const engineEvents = new EngineEventDispatch();
  const shared = config.cluster.sandboxNetwork;
  const sandboxNetwork =
    shared === null
      ? await embeddedSandboxNetwork(store, boundaries.sandboxDeliveryWaitMs ?? config.sandbox.deliveryWaitMs)
      : new RemoteSandboxNetwork(
          { ...shared, key: keys.sandboxNetworkKey, maxLineBytes: config.cluster.sandboxNetworkMaxLineBytes },
          logger,
        );
  const sandbox = new SandboxEngine({
    events: engineEvents.forEngine('sandbox'),
    network: sandboxNetwork,
    nodeId: keeper.nodeId,
    // Read back whole, with the group chat a simulated group message was written in.
    findReceived: (numberId, engineMessageId) => findWholeInboundByEngineId(store.db, numberId, engineMessageId),
    listSandboxPhones: () => listPhonesOfEngine(store.db, 'sandbox'),
    logger,
    linkQrRotateMs: config.sandbox.linkQrRotateMs,
  });
  // Baileys is loaded the first time a Baileys session needs it: most CLI commands never do.
  const baileys = onDemand(BAILEYS_ENGINE, async () => {
    const { BaileysEngine } = await import('../engines/baileys/baileys-engine.ts');
    return new BaileysEngine({
      store,
      secretBox: keys.secretBox,
      events: engineEvents.forEngine('baileys'),
      logger,
      pacing: { minimumGapMs: config.baileys.sendGapMs, jitterMs: config.baileys.sendJitterMs },
      version: config.baileys.webVersion,
      socketFactory: boundaries.baileysSocketFactory,
      timings: { quotaCheckIntervalMs: config.baileys.newChatQuotaCheckMs, ...boundaries.baileysTimings },
    });
  });
  const cloud = new CloudEngine({
    store,
    secretBox: keys.secretBox,
    events: engineEvents.forEngine('cloud'),
    graph: new GraphApi(config.cloudApi),
    logger: logger.child({ engine: 'cloud' }),
    pairRatePauseMs: config.cloudApi.pairRatePauseMs,
  });
  // The Cloud API lacks much of a phone's port: what it does not implement is declined for it.
  const engines = new EngineRegistry([sandbox, baileys, declineMissing(cloud)]);
  const supervisor = new SessionSupervisor(
    store,
    engines,
    committer,
    webhooks.deliveryWorker,
    logger,
    keeper,
    staleWrites,
    [pauses, newChatCaps],
    sessionStartsPerSecond,
    metrics,
  );
  return { keeper, supervisor, pauses, newChatCaps, sandboxNetwork, engineEvents, cloudCallbacks: cloud };
}

/** The simulated network in this process, with its groups kept in the gateway's database between runs. */
async function embeddedSandboxNetwork(store: Store, deliveryWaitMs?: number): Promise<SandboxNetwork> {
  const network = new SandboxNetwork(
    undefined,
    undefined,
    {
      load: () => listSandboxGroups(store.db),
      save: (record) => saveSandboxGroup(store.db, record, new Date()),
      remove: (id) => deleteSandboxGroup(store.db, id),
    },
    deliveryWaitMs,
  );
  await network.restoreGroups();
  return network;
}
