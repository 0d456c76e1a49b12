import os from 'node:os';
import path from 'node:path';
import type { Variable } from './config-values.ts';
import { VARIABLES, type ConfigValues } from './config-variables.ts';
import type { MediaLimits } from './domain/media.ts';
import type { PlanAmounts } from './domain/plans.ts';
import type { PresetName } from './domain/send-policy.ts';

export { DEFAULT_SQLITE_PATH } from './config-variables.ts';

/**
 * The gateway's whole configuration, read from the environment once at start and frozen.
 * This module is the only reader of process.env; everything else is handed a Config. Each
 * variable's name, default, bounds, error message and documentation are declared once, in
 * src/config-variables.ts; this module arranges the values read there into the Config's shape
 * and checks the few rules that join several variables.
 */
const MIB = 1024 * 1024;

/** Where media bytes go when WAGW_MEDIA_STORE is s3. */
export interface S3StoreConfig {
  bucket: string;
  region: string;
  /** Another service than AWS (MinIO, R2, …); null for AWS itself. */
  endpoint: string | null;
  forcePathStyle: boolean;
  /** Prepended to every object key, so that one bucket can hold several gateways' media. */
  prefix: string;
  /** Null for both: the AWS SDK's own credential chain (environment, profile, instance role). */
  accessKeyId: string | null;
  secretAccessKey: string | null;
}

export interface MediaConfig {
  /**
   * Where the filesystem blob store keeps media bytes (WAGW_MEDIA_DIR, or media/ in the data
   * directory); with S3, where files are spooled while they stream in.
   */
  directory: string;
  /** Null for the filesystem store, the embedded default. */
  s3: S3StoreConfig | null;
  limits: MediaLimits;
  /** How long sent and received media are kept (WAGW_MEDIA_RETENTION_DAYS, 30 by default). */
  retentionMs: number;
  /** How long an upload no message has used is kept (WAGW_MEDIA_UPLOAD_TTL_HOURS, 24 by default). */
  uploadTtlMs: number;
  /** How long the signed download links in webhooks last (WAGW_MEDIA_LINK_TTL_HOURS, 24 by default). */
  linkTtlMs: number;
  /**
   * How long an incoming file's download may hold its message back (WAGW_MEDIA_RECEIVE_TIMEOUT_MS,
   * 30 s by default); past it the message is reported without the file, which is fetched again later.
   */
  receiveTimeoutMs: number;
  /** media.url: how long connecting may take, and how long the upstream may go silent. */
  fetchConnectTimeoutMs: number;
  fetchIdleTimeoutMs: number;
  allowances: MediaAllowances;
  /**
   * The free space the media directory's and the SQLite database's disks keep: below the larger
   * of the two figures, files stop being written (docs/media.md).
   */
  minFreeBytes: number;
  minFreePercent: number;
}

/** What each plan's accounts may put into media storage (docs/media.md). */
export interface MediaAllowances {
  /** Bytes of unexpired files an account may hold, uploads and sent files. */
  storageBytes: PlanAmounts;
  /** Bytes an account may upload through POST /media within a window. */
  uploadBytesPerWindow: PlanAmounts;
  /** Bytes the gateway fetches for an account's media.url within a window. */
  fetchBytesPerWindow: PlanAmounts;
  /** Link-preview fetches (a page, an image) a number may have made within a window. */
  previewFetchesPerNumber: number;
  windowMs: number;
}

export interface GovernorConfig {
  /** The gateway's default policy, a preset's name (WAGW_SEND_POLICY, `off` by default). */
  defaultPreset: PresetName;
  /** How long a queued message waits at most unless its send says otherwise (WAGW_SEND_EXPIRY_HOURS, 24). */
  defaultExpiryMs: number;
  /** How far ahead send_at may be (WAGW_SEND_AT_HORIZON_DAYS, 30). */
  sendAtHorizonMs: number;
  /** The longest the queue runner sleeps without looking for due messages (WAGW_SEND_QUEUE_CHECK_MS, 10 s). */
  queueCheckMs: number;
  /** The content (text and structured, UTF-8 bytes) a number's queue may hold (WAGW_SEND_QUEUE_MAX_KIB_PER_NUMBER, 64 MiB). */
  queueBytesPerNumber: number;
}

export interface Config {
  database: DatabaseConfig;
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    /** Bounds open sockets, since no timer ever cuts a slow request (see docs/adr). */
    maxConnections: number;
    /** Bounds the open sockets of one client address (an IPv6 /64), so that no one takes them all. */
    maxConnectionsPerAddress: number;
    /** Bounds the open sockets of one IPv6 /48, the block a site is given: many /64s of one client. */
    maxConnectionsPerIpv6Site: number;
    /** How long a client may take to send a request's headers (not its body). */
    headersTimeoutMs: number;
    /** How long a body sent without credentials (a sign-in form, an invite) may take to arrive. */
    unauthenticatedBodyTimeoutMs: number;
    shutdownGraceMs: number;
    /** How long a stop keeps a connection that has sent nothing yet open for its first request. */
    unusedConnectionGraceMs: number;
    /**
     * Which reverse proxies' X-Forwarded-For/-Proto to believe, for client addresses and HTTPS
     * detection: false (none), a number of hops, or a comma-separated list of addresses/CIDRs.
     */
    trustProxy: false | number | string;
  };
  dashboard: {
    /** A session unused for this long is over. */
    sessionIdleTimeoutMs: number;
    /** A session is over this long after sign-in, however busy. */
    sessionAbsoluteTimeoutMs: number;
  };
  apiKeyPrefix: string;
  /**
   * The gateway's address as clients reach it (WAGW_PUBLIC_URL), without a trailing slash, for
   * absolute links in webhooks; '' when unset, and links are then paths.
   */
  publicUrl: string;
  maxMessageLength: number;
  /** WAGW_MAX_PENDING_SENDS: sends one node works on at once before it answers 503 `overloaded`; null for no cap. */
  maxPendingSends: number | null;
  /** WhatsApp lookups POST /check_numbers may make per number and minute (WAGW_NUMBER_CHECKS_PER_MINUTE); remembered answers are free. */
  numberChecksPerMinute: number;
  /** How long "typing…" lasts unless renewed (WAGW_TYPING_SECONDS, 25 by default). */
  typingMs: number;
  /** How long a contact's profile, picture included, is answered from memory before WhatsApp is asked again (WAGW_PROFILE_CACHE_SECONDS, 300). */
  profileCacheMs: number;
  sandbox: {
    /** Simulated incoming messages one account may make a minute (the API and the dashboard together). */
    receivesPerMinute: number;
    /** WAGW_SANDBOX_LINK_QR_SECONDS: how often a sandbox number being linked offers a new QR (20 s, as WhatsApp). */
    linkQrRotateMs: number;
    /**
     * WAGW_SANDBOX_DELIVERY_WAIT_MS: how long a sandbox send waits for a connected recipient to store
     * the message before answering anyway (2,000). A busy machine's tests raise it, so that a 200
     * still means the recipient holds the message when the machine is slow.
     */
    deliveryWaitMs: number;
  };
  admin: { email: string | undefined; password: string | undefined };
  logLevel: string;
  /**
   * `enabled` false commits every write in a transaction of its own, as durable but dearer; it
   * exists to measure what group commit saves (docs/benchmarks.md).
   */
  groupCommit: { enabled: boolean; maxBatchSize: number };
  /** Where the gateway keeps files of its own, such as a generated secret key. */
  dataDirectory: string;
  /** 32 bytes that encrypt secrets at rest; undefined means use (or create) the key file. */
  secretKey: Buffer | undefined;
  webhooks: WebhookConfig;
  media: MediaConfig;
  baileys: {
    /** The least time between two sends from one number; 0 means no pacing. */
    sendGapMs: number;
    /** Up to this much extra, at random, on top of the gap. */
    sendJitterMs: number;
    /** The WhatsApp Web version to announce, when Baileys' built-in one is refused. */
    webVersion: [number, number, number] | undefined;
    /** How often a connected session reads WhatsApp's cap on its new chats. */
    newChatQuotaCheckMs: number;
  };
  /** Numbers on Meta's Cloud API: where its Graph API is, and which version the paths name. */
  cloudApi: { baseUrl: string; version: string; pairRatePauseMs: number };
  cluster: ClusterConfig;
  /**
   * WAGW_INTERRUPTED_SEND_AFTER_MS: a send still `queued` this long after its row was written was
   * cut off by a crash (no engine takes this long to answer). The interrupted-send sweep fails
   * such rows and runs this often; an Idempotency-Key claim held this long is taken over. One
   * setting, because the two must agree (docs/cluster.md).
   */
  interruptedSendAfterMs: number;
  /** The send governor (docs/send-governor.md). */
  governor: GovernorConfig;
  metrics: {
    /** The bearer token `GET /metrics` asks for; undefined means there are no metrics to scrape. */
    token: string | undefined;
  };
  version: string;
}

interface ClusterConfig {
  /** WAGW_NODE_NAME: what the operator calls this node; the host name by default. */
  nodeName: string;
  /** WAGW_NODE_URL: where other nodes reach this one; without it, no request is forwarded here. */
  nodeUrl: string | null;
  /** WAGW_LEASE_TTL_MS: how long a number's lease lasts unless its node renews it. */
  leaseTtlMs: number;
  /** WAGW_MAX_SESSIONS_PER_NODE: the most numbers this node holds; null for no cap. */
  maxSessionsPerNode: number | null;
  /**
   * WAGW_SESSION_STARTS_PER_SECOND: the most sessions of a real network (Baileys) this node
   * starts a second, so a cold start or a takeover of many numbers is not a storm of logins;
   * also the pace at which it asks other nodes for numbers (ADR 0041).
   */
  sessionStartsPerSecond: number;
  /** WAGW_OWNER_WAIT_MS: how long a request for a number without a live owner waits for a takeover. */
  ownerWaitMs: number;
  /** WAGW_HANDOVER_DRAIN_MS: the longest a node giving a number up waits for the work under way on it. */
  handoverDrainMs: number;
  /** WAGW_NODE_CALL_TIMEOUT_MS: the longest any call to another node may take, however alive that node looks. */
  nodeCallTimeoutMs: number;
  /** WAGW_SANDBOX_NETWORK: `tcp://host:port` of a shared sandbox network; null runs it in this process. */
  sandboxNetwork: { host: string; port: number } | null;
  /** WAGW_SANDBOX_NETWORK_MAX_LINE_BYTES: the longest line the shared sandbox network and a node read from each other. */
  sandboxNetworkMaxLineBytes: number;
}

export interface WebhookConfig {
  timeoutMs: number;
  /** Delays before the second, third, … attempt; after the last, a delivery is failed. */
  retryDelaysSeconds: readonly number[];
  /**
   * WAGW_WEBHOOK_ALLOW_PRIVATE: lifts the SSRF guard for every private address and every tenant.
   * Kept for old setups, with a warning at start; the allow-list below is the way to do it.
   */
  allowPrivateAddresses: boolean;
  /** WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: the private `host:port`s webhooks may reach, each exactly. */
  allowedPrivateHosts: readonly { host: string; port: number }[];
  maxInFlight: number;
  maxInFlightPerEndpoint: number;
  /** Requests a second to one destination host (host:port), whatever webhooks point at it. */
  maxPerHostPerSecond: number;
  /** Webhooks one account may have. */
  maxPerAccount: number;
  pollIntervalMs: number;
  attemptRetentionDays: number;
  disableAfterFailingDays: number;
}

export type DatabaseConfig =
  | {
      dialect: 'sqlite';
      path: string;
      url: string;
      /**
       * WAGW_SQLITE_COMMIT_SYNC: where each commit's fsync of the log runs. `thread-pool`, the
       * default, commits with synchronous=NORMAL and syncs the log on libuv's thread pool before
       * the commit is reported; `event-loop` (synchronous=FULL) stalls every request for it
       * (ADR 0037). Both keep a 200's row on disk.
       */
      commitSync: 'event-loop' | 'thread-pool';
    }
  | {
      dialect: 'postgres';
      connectionString: string;
      url: string;
      poolSize: number;
      /** Off for poolers that do not keep a client on one server connection (PgBouncer in transaction mode). */
      preparedStatements: boolean;
      /**
       * How long the server lets one of our sessions sit idle inside a transaction before ending
       * it: a third of the lease TTL (at least 2 s). A node frozen mid-transaction (SIGSTOP, a VM
       * pause) would otherwise keep its row locks, and a number's lease could not be taken over
       * until it woke, however long ago the lease expired.
       */
      idleInTransactionTimeoutMs: number;
    };
export class ConfigError extends Error {
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Environment = Record<string, string | undefined>;

const VERSION = '0.1.0';
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Reads every declared variable, each problem pushed naming its variable. */
function readVariables(env: Environment, problems: string[]): ConfigValues {
  const values: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    const { onlyWhen } = variable;
    const raw = onlyWhen === undefined || env[onlyWhen.variable] === onlyWhen.is ? env[name] : undefined;
    values[name] = variable.read(name, raw, problems);
  }
  return values as ConfigValues;
}

export function loadConfig(env: Environment = process.env): Config {
  const problems: string[] = [];
  const v = readVariables(env, problems);
  const mediaLimits: MediaLimits = {
    image: v.WAGW_MEDIA_MAX_IMAGE_BYTES,
    video: v.WAGW_MEDIA_MAX_VIDEO_BYTES,
    audio: v.WAGW_MEDIA_MAX_AUDIO_BYTES,
    voice: v.WAGW_MEDIA_MAX_AUDIO_BYTES,
    document: v.WAGW_MEDIA_MAX_DOCUMENT_BYTES,
    sticker: v.WAGW_MEDIA_MAX_STICKER_BYTES,
  };
  const config: Config = {
    database:
      v.DATABASE_URL.dialect === 'sqlite'
        ? { ...v.DATABASE_URL, path: path.resolve(v.DATABASE_URL.path), commitSync: v.WAGW_SQLITE_COMMIT_SYNC }
        : {
            dialect: 'postgres',
            connectionString: v.DATABASE_URL.url,
            url: v.DATABASE_URL.url,
            poolSize: v.WAGW_DATABASE_POOL_SIZE,
            preparedStatements: v.WAGW_DATABASE_PREPARED_STATEMENTS,
            idleInTransactionTimeoutMs: Math.max(2_000, Math.round(v.WAGW_LEASE_TTL_MS / 3)),
          },
    http: {
      host: v.HOST,
      port: v.PORT,
      bodyLimitBytes: v.WAGW_BODY_LIMIT_BYTES,
      maxConnections: v.WAGW_MAX_CONNECTIONS,
      maxConnectionsPerAddress: v.WAGW_MAX_CONNECTIONS_PER_IP,
      maxConnectionsPerIpv6Site: v.WAGW_MAX_CONNECTIONS_PER_IPV6_48,
      headersTimeoutMs: v.WAGW_HEADERS_TIMEOUT_MS,
      unauthenticatedBodyTimeoutMs: v.WAGW_UNAUTHENTICATED_BODY_TIMEOUT_MS,
      shutdownGraceMs: v.WAGW_SHUTDOWN_GRACE_MS,
      unusedConnectionGraceMs: v.WAGW_SHUTDOWN_UNUSED_CONNECTION_MS,
      trustProxy: v.WAGW_TRUST_PROXY,
    },
    dashboard: {
      sessionIdleTimeoutMs: v.WAGW_SESSION_IDLE_MINUTES * MINUTE,
      sessionAbsoluteTimeoutMs: v.WAGW_SESSION_MAX_HOURS * HOUR,
    },
    apiKeyPrefix: v.WAGW_KEY_PREFIX,
    publicUrl: v.WAGW_PUBLIC_URL,
    maxMessageLength: v.WAGW_MAX_MESSAGE_LENGTH,
    maxPendingSends: v.WAGW_MAX_PENDING_SENDS,
    sandbox: {
      receivesPerMinute: v.WAGW_SANDBOX_RECEIVES_PER_MINUTE,
      linkQrRotateMs: v.WAGW_SANDBOX_LINK_QR_SECONDS * SECOND,
      deliveryWaitMs: v.WAGW_SANDBOX_DELIVERY_WAIT_MS,
    },
    numberChecksPerMinute: v.WAGW_NUMBER_CHECKS_PER_MINUTE,
    typingMs: v.WAGW_TYPING_SECONDS * SECOND,
    profileCacheMs: v.WAGW_PROFILE_CACHE_SECONDS * SECOND,
    admin: { email: v.WAGW_ADMIN_EMAIL ?? undefined, password: v.WAGW_ADMIN_PASSWORD ?? undefined },
    logLevel: v.LOG_LEVEL,
    groupCommit: { enabled: v.WAGW_GROUP_COMMIT, maxBatchSize: v.WAGW_GROUP_COMMIT_MAX_BATCH },
    dataDirectory: path.resolve(v.WAGW_DATA_DIR),
    secretKey: v.WAGW_SECRET_KEY,
    media: {
      directory: path.resolve(v.WAGW_MEDIA_DIR ?? path.join(v.WAGW_DATA_DIR, 'media')),
      s3: v.WAGW_MEDIA_STORE === 's3' ? s3Store(v, problems) : null,
      limits: mediaLimits,
      retentionMs: v.WAGW_MEDIA_RETENTION_DAYS * DAY,
      uploadTtlMs: v.WAGW_MEDIA_UPLOAD_TTL_HOURS * HOUR,
      linkTtlMs: v.WAGW_MEDIA_LINK_TTL_HOURS * HOUR,
      receiveTimeoutMs: v.WAGW_MEDIA_RECEIVE_TIMEOUT_MS,
      fetchConnectTimeoutMs: v.WAGW_MEDIA_FETCH_CONNECT_TIMEOUT_MS,
      fetchIdleTimeoutMs: v.WAGW_MEDIA_FETCH_IDLE_TIMEOUT_MS,
      allowances: {
        storageBytes: v.WAGW_MEDIA_STORAGE_QUOTA_MIB,
        uploadBytesPerWindow: v.WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW,
        fetchBytesPerWindow: v.WAGW_MEDIA_FETCH_MIB_PER_WINDOW,
        previewFetchesPerNumber: v.WAGW_LINK_PREVIEW_FETCHES_PER_NUMBER,
        windowMs: v.WAGW_MEDIA_BYTE_WINDOW_SECONDS * SECOND,
      },
      minFreeBytes: v.WAGW_MEDIA_MIN_FREE_BYTES,
      minFreePercent: v.WAGW_MEDIA_MIN_FREE_PERCENT,
    },
    webhooks: {
      timeoutMs: v.WAGW_WEBHOOK_TIMEOUT_MS,
      retryDelaysSeconds: v.WAGW_WEBHOOK_RETRY_SCHEDULE,
      allowPrivateAddresses: v.WAGW_WEBHOOK_ALLOW_PRIVATE,
      allowedPrivateHosts: v.WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS,
      maxInFlight: v.WAGW_WEBHOOK_MAX_IN_FLIGHT,
      maxInFlightPerEndpoint: v.WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT,
      maxPerHostPerSecond: v.WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND,
      maxPerAccount: v.WAGW_WEBHOOKS_PER_ACCOUNT,
      pollIntervalMs: v.WAGW_WEBHOOK_POLL_INTERVAL_MS,
      attemptRetentionDays: v.WAGW_WEBHOOK_ATTEMPT_RETENTION_DAYS,
      disableAfterFailingDays: v.WAGW_WEBHOOK_DISABLE_AFTER_FAILING_DAYS,
    },
    baileys: {
      sendGapMs: v.WAGW_BAILEYS_SEND_GAP_MS,
      sendJitterMs: v.WAGW_BAILEYS_SEND_JITTER_MS,
      webVersion: v.WAGW_WA_WEB_VERSION,
      newChatQuotaCheckMs: v.WAGW_NEW_CHAT_QUOTA_CHECK_MINUTES * 60_000,
    },
    cloudApi: { baseUrl: v.WAGW_CLOUD_API_URL, version: v.WAGW_CLOUD_API_VERSION, pairRatePauseMs: v.WAGW_CLOUD_PAIR_RATE_PAUSE_MS },
    cluster: {
      nodeName: v.WAGW_NODE_NAME ?? os.hostname(),
      nodeUrl: v.WAGW_NODE_URL,
      leaseTtlMs: v.WAGW_LEASE_TTL_MS,
      maxSessionsPerNode: v.WAGW_MAX_SESSIONS_PER_NODE,
      sessionStartsPerSecond: v.WAGW_SESSION_STARTS_PER_SECOND,
      ownerWaitMs: v.WAGW_OWNER_WAIT_MS,
      handoverDrainMs: v.WAGW_HANDOVER_DRAIN_MS,
      nodeCallTimeoutMs: v.WAGW_NODE_CALL_TIMEOUT_MS,
      sandboxNetwork: v.WAGW_SANDBOX_NETWORK,
      sandboxNetworkMaxLineBytes: v.WAGW_SANDBOX_NETWORK_MAX_LINE_BYTES ?? largestNetworkLineBytes(mediaLimits, v.WAGW_MAX_MESSAGE_LENGTH),
    },
    interruptedSendAfterMs: v.WAGW_INTERRUPTED_SEND_AFTER_MS,
    governor: {
      defaultPreset: v.WAGW_SEND_POLICY,
      defaultExpiryMs: v.WAGW_SEND_EXPIRY_HOURS * HOUR,
      sendAtHorizonMs: v.WAGW_SEND_AT_HORIZON_DAYS * DAY,
      queueCheckMs: v.WAGW_SEND_QUEUE_CHECK_MS,
      queueBytesPerNumber: v.WAGW_SEND_QUEUE_MAX_KIB_PER_NUMBER * 1024,
    },
    metrics: { token: v.WAGW_METRICS_TOKEN },
    version: VERSION,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** The S3 store's settings, with the rules that join several of its variables. */
function s3Store(v: ConfigValues, problems: string[]): S3StoreConfig {
  if (v.WAGW_MEDIA_S3_BUCKET === '') problems.push('WAGW_MEDIA_S3_BUCKET is required when WAGW_MEDIA_STORE is s3.');
  if ((v.WAGW_MEDIA_S3_ACCESS_KEY_ID === null) !== (v.WAGW_MEDIA_S3_SECRET_ACCESS_KEY === null)) {
    problems.push(
      'WAGW_MEDIA_S3_ACCESS_KEY_ID and WAGW_MEDIA_S3_SECRET_ACCESS_KEY go together: set both, or neither to use the AWS credential chain.',
    );
  }
  return {
    bucket: v.WAGW_MEDIA_S3_BUCKET,
    region: v.WAGW_MEDIA_S3_REGION ?? v.AWS_REGION ?? 'us-east-1',
    endpoint: v.WAGW_MEDIA_S3_ENDPOINT,
    // Services other than AWS mostly serve buckets by path, not by host name.
    forcePathStyle: v.WAGW_MEDIA_S3_FORCE_PATH_STYLE ?? v.WAGW_MEDIA_S3_ENDPOINT !== null,
    prefix: v.WAGW_MEDIA_S3_PREFIX,
    accessKeyId: v.WAGW_MEDIA_S3_ACCESS_KEY_ID,
    secretAccessKey: v.WAGW_MEDIA_S3_SECRET_ACCESS_KEY,
  };
}

/**
 * A message with the largest file the gateway accepts, as the shared sandbox network carries it:
 * the file in base64, its caption escaped as JSON at worst (six bytes a character), and a mebibyte
 * for everything else. Any longer line is no message of ours.
 */
function largestNetworkLineBytes(limits: MediaLimits, maxMessageLength: number): number {
  return Math.ceil(Math.max(...Object.values(limits)) / 3) * 4 + 6 * maxMessageLength + MIB;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The database URL with any password masked, for logs and the system page. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.dialect === 'sqlite') return `sqlite:${database.path}`;
  try {
    const url = new URL(database.url);
    if (url.password !== '') url.password = '***';
    if (url.searchParams.has('password')) url.searchParams.set('password', '***');
    return url.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}
