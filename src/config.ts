import type { MediaLimits } from './domain/media.ts';
import type { PlanAmounts } from './domain/plans.ts';
import os from 'node:os';
import {
  type S3StoreConfig,
  parseRetrySchedule,
  parseHostPorts,
  parseBoolean,
  parsePublicUrl,
  parseTrustProxy,
  parseWebVersion,
  parseNodeUrl,
  parseSandboxNetwork,
  parseMetricsToken,
  parseSecretKey,
  parseS3Store,
  parsePlanMebibytes,
} from './config-values.ts';
import path from 'node:path';
import { isPresetName, PRESET_NAMES, type PresetName } from './domain/send-policy.ts';

export type { S3StoreConfig } from './config-values.ts';

/**
 * The gateway's whole configuration, read from the environment once at start and frozen.
 * This module is the only reader of process.env; everything else is handed a Config.
 * Every option is documented in .env.example and in the README's configuration table.
 */
const MIB = 1024 * 1024;

/** An S3-compatible bucket for media bytes (WAGW_MEDIA_STORE=s3). */
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
  };
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

export const DEFAULT_SQLITE_PATH = './data/wagw.db';
const VERSION = '0.1.0';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Environment = process.env): Config {
  const problems: string[] = [];
  const integer = (name: string, fallback: number, minimum: number, maximum = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    // Only plain decimal digits: Number() would also read " " as 0 and "0x10" as 16.
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < minimum || value > maximum) {
      problems.push(`${name} must be a whole number from ${minimum} to ${maximum}, got "${raw}".`);
      return fallback;
    }
    return value;
  };

  const apiKeyPrefix = env.WAGW_KEY_PREFIX || 'wagw';
  if (!/^[a-z][a-z0-9]{0,15}$/.test(apiKeyPrefix)) {
    problems.push(`WAGW_KEY_PREFIX must be 1-16 lowercase letters or digits, starting with a letter; got "${apiKeyPrefix}".`);
  }

  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${logLevel}".`);

  const leaseTtlMs = integer('WAGW_LEASE_TTL_MS', 15_000, 1_000, 600_000);
  // WhatsApp's own limits: 16 MiB for photos, video and sound, 100 MiB for documents, 500 KiB for stickers.
  const mediaLimits: MediaLimits = {
    image: integer('WAGW_MEDIA_MAX_IMAGE_BYTES', 16 * MIB, 1),
    video: integer('WAGW_MEDIA_MAX_VIDEO_BYTES', 16 * MIB, 1),
    audio: integer('WAGW_MEDIA_MAX_AUDIO_BYTES', 16 * MIB, 1),
    voice: integer('WAGW_MEDIA_MAX_AUDIO_BYTES', 16 * MIB, 1),
    document: integer('WAGW_MEDIA_MAX_DOCUMENT_BYTES', 100 * MIB, 1),
    sticker: integer('WAGW_MEDIA_MAX_STICKER_BYTES', 500 * 1024, 1),
  };
  const maxMessageLength = integer('WAGW_MAX_MESSAGE_LENGTH', 65_536, 1);
  const config: Config = {
    database: parseDatabaseUrl(
      env.DATABASE_URL,
      {
        poolSize: integer('WAGW_DATABASE_POOL_SIZE', 10, 1),
        preparedStatements:
          env.WAGW_DATABASE_PREPARED_STATEMENTS === undefined ||
          env.WAGW_DATABASE_PREPARED_STATEMENTS === '' ||
          parseBoolean('WAGW_DATABASE_PREPARED_STATEMENTS', env.WAGW_DATABASE_PREPARED_STATEMENTS, problems),
        idleInTransactionTimeoutMs: Math.max(2_000, Math.round(leaseTtlMs / 3)),
      },
      parseCommitSync(env.WAGW_SQLITE_COMMIT_SYNC, problems),
      problems,
    ),
    http: {
      host: env.HOST || '127.0.0.1',
      port: integer('PORT', 3000, 0, 65_535),
      bodyLimitBytes: integer('WAGW_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
      maxConnections: integer('WAGW_MAX_CONNECTIONS', 4096, 1),
      maxConnectionsPerAddress: integer('WAGW_MAX_CONNECTIONS_PER_IP', 256, 1),
      maxConnectionsPerIpv6Site: integer('WAGW_MAX_CONNECTIONS_PER_IPV6_48', 1024, 1),
      headersTimeoutMs: integer('WAGW_HEADERS_TIMEOUT_MS', 60_000, 100),
      unauthenticatedBodyTimeoutMs: integer('WAGW_UNAUTHENTICATED_BODY_TIMEOUT_MS', 10_000, 100),
      shutdownGraceMs: integer('WAGW_SHUTDOWN_GRACE_MS', 10_000, 0),
      trustProxy: parseTrustProxy(env.WAGW_TRUST_PROXY),
    },
    dashboard: {
      sessionIdleTimeoutMs: integer('WAGW_SESSION_IDLE_MINUTES', 60, 1, 10_080) * 60_000,
      sessionAbsoluteTimeoutMs: integer('WAGW_SESSION_MAX_HOURS', 12, 1, 8_760) * 3_600_000,
    },
    apiKeyPrefix,
    publicUrl: parsePublicUrl(env.WAGW_PUBLIC_URL, problems),
    maxMessageLength,
    maxPendingSends: env.WAGW_MAX_PENDING_SENDS === '0' ? null : integer('WAGW_MAX_PENDING_SENDS', 1_000, 1),
    sandbox: {
      receivesPerMinute: integer('WAGW_SANDBOX_RECEIVES_PER_MINUTE', 60, 1),
      linkQrRotateMs: integer('WAGW_SANDBOX_LINK_QR_SECONDS', 20, 1, 600) * 1000,
      deliveryWaitMs: integer('WAGW_SANDBOX_DELIVERY_WAIT_MS', 2_000, 0, 600_000),
    },
    numberChecksPerMinute: integer('WAGW_NUMBER_CHECKS_PER_MINUTE', 60, 1, 10_000),
    typingMs: integer('WAGW_TYPING_SECONDS', 25, 1, 300) * 1000,
    profileCacheMs: integer('WAGW_PROFILE_CACHE_SECONDS', 300, 0, 86_400) * 1000,
    admin: { email: env.WAGW_ADMIN_EMAIL || undefined, password: env.WAGW_ADMIN_PASSWORD || undefined },
    logLevel,
    groupCommit: {
      enabled:
        env.WAGW_GROUP_COMMIT === undefined ||
        env.WAGW_GROUP_COMMIT === '' ||
        parseBoolean('WAGW_GROUP_COMMIT', env.WAGW_GROUP_COMMIT, problems),
      maxBatchSize: integer('WAGW_GROUP_COMMIT_MAX_BATCH', 256, 1),
    },
    dataDirectory: path.resolve(env.WAGW_DATA_DIR || './data'),
    secretKey: parseSecretKey(env.WAGW_SECRET_KEY, problems),
    media: {
      directory: path.resolve(env.WAGW_MEDIA_DIR || path.join(env.WAGW_DATA_DIR || './data', 'media')),
      s3: parseS3Store(env, problems),
      limits: mediaLimits,
      retentionMs: integer('WAGW_MEDIA_RETENTION_DAYS', 30, 1, 3650) * 86_400_000,
      uploadTtlMs: integer('WAGW_MEDIA_UPLOAD_TTL_HOURS', 24, 1, 8760) * 3_600_000,
      linkTtlMs: integer('WAGW_MEDIA_LINK_TTL_HOURS', 24, 1, 168) * 3_600_000,
      receiveTimeoutMs: integer('WAGW_MEDIA_RECEIVE_TIMEOUT_MS', 30_000, 100),
      fetchConnectTimeoutMs: integer('WAGW_MEDIA_FETCH_CONNECT_TIMEOUT_MS', 10_000, 100),
      fetchIdleTimeoutMs: integer('WAGW_MEDIA_FETCH_IDLE_TIMEOUT_MS', 30_000, 100),
      allowances: {
        storageBytes: parsePlanMebibytes(
          'WAGW_MEDIA_STORAGE_QUOTA_MIB',
          env.WAGW_MEDIA_STORAGE_QUOTA_MIB,
          { starter: 512, pro: 5_120, enterprise: 51_200 },
          problems,
        ),
        uploadBytesPerWindow: parsePlanMebibytes(
          'WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW',
          env.WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW,
          { starter: 512, pro: 2_048, enterprise: 10_240 },
          problems,
        ),
        fetchBytesPerWindow: parsePlanMebibytes(
          'WAGW_MEDIA_FETCH_MIB_PER_WINDOW',
          env.WAGW_MEDIA_FETCH_MIB_PER_WINDOW,
          { starter: 512, pro: 2_048, enterprise: 10_240 },
          problems,
        ),
        previewFetchesPerNumber: integer('WAGW_LINK_PREVIEW_FETCHES_PER_NUMBER', 600, 1),
        windowMs: integer('WAGW_MEDIA_BYTE_WINDOW_SECONDS', 3_600, 1, 86_400) * 1000,
      },
      minFreeBytes: integer('WAGW_MEDIA_MIN_FREE_BYTES', 1_024 * MIB, 0),
      minFreePercent: integer('WAGW_MEDIA_MIN_FREE_PERCENT', 2, 0, 99),
    },
    webhooks: {
      timeoutMs: integer('WAGW_WEBHOOK_TIMEOUT_MS', 15_000, 100),
      retryDelaysSeconds: parseRetrySchedule(env.WAGW_WEBHOOK_RETRY_SCHEDULE, problems),
      allowPrivateAddresses: parseBoolean('WAGW_WEBHOOK_ALLOW_PRIVATE', env.WAGW_WEBHOOK_ALLOW_PRIVATE, problems),
      allowedPrivateHosts: parseHostPorts('WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS', env.WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS, problems),
      maxInFlight: integer('WAGW_WEBHOOK_MAX_IN_FLIGHT', 256, 1),
      maxInFlightPerEndpoint: integer('WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', 16, 1),
      maxPerHostPerSecond: integer('WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND', 1_000, 1),
      maxPerAccount: integer('WAGW_WEBHOOKS_PER_ACCOUNT', 10, 1),
      pollIntervalMs: integer('WAGW_WEBHOOK_POLL_INTERVAL_MS', 1_000, 10),
      attemptRetentionDays: integer('WAGW_WEBHOOK_ATTEMPT_RETENTION_DAYS', 30, 1),
      disableAfterFailingDays: integer('WAGW_WEBHOOK_DISABLE_AFTER_FAILING_DAYS', 5, 1),
    },
    baileys: {
      sendGapMs: integer('WAGW_BAILEYS_SEND_GAP_MS', 0, 0),
      sendJitterMs: integer('WAGW_BAILEYS_SEND_JITTER_MS', 0, 0),
      webVersion: parseWebVersion(env.WAGW_WA_WEB_VERSION, problems),
    },
    cluster: {
      nodeName: env.WAGW_NODE_NAME || os.hostname(),
      nodeUrl: parseNodeUrl(env.WAGW_NODE_URL, problems),
      leaseTtlMs,
      maxSessionsPerNode: env.WAGW_MAX_SESSIONS_PER_NODE ? integer('WAGW_MAX_SESSIONS_PER_NODE', 0, 1) : null,
      sessionStartsPerSecond: integer('WAGW_SESSION_STARTS_PER_SECOND', 4, 1, 1_000),
      ownerWaitMs: integer('WAGW_OWNER_WAIT_MS', 5_000, 0, 120_000),
      handoverDrainMs: integer('WAGW_HANDOVER_DRAIN_MS', 5_000, 0, 120_000),
      nodeCallTimeoutMs: integer('WAGW_NODE_CALL_TIMEOUT_MS', 60_000, 1_000, 600_000),
      sandboxNetwork: parseSandboxNetwork(env.WAGW_SANDBOX_NETWORK, problems),
      sandboxNetworkMaxLineBytes: integer(
        'WAGW_SANDBOX_NETWORK_MAX_LINE_BYTES',
        largestNetworkLineBytes(mediaLimits, maxMessageLength),
        65_536,
      ),
    },
    interruptedSendAfterMs: integer('WAGW_INTERRUPTED_SEND_AFTER_MS', 60_000, 1_000),
    governor: {
      defaultPreset: parseSendPolicyPreset(env.WAGW_SEND_POLICY, problems),
      defaultExpiryMs: integer('WAGW_SEND_EXPIRY_HOURS', 24, 1, 24 * 366) * 3_600_000,
      sendAtHorizonMs: integer('WAGW_SEND_AT_HORIZON_DAYS', 30, 1, 366) * 86_400_000,
      queueCheckMs: integer('WAGW_SEND_QUEUE_CHECK_MS', 10_000, 100, 600_000),
      queueBytesPerNumber: integer('WAGW_SEND_QUEUE_MAX_KIB_PER_NUMBER', 65_536, 64) * 1024,
    },
    metrics: { token: parseMetricsToken(env.WAGW_METRICS_TOKEN, problems) },
    version: VERSION,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/**
 * A message with the largest file the gateway accepts, as the shared sandbox network carries it:
 * the file in base64, its caption escaped as JSON at worst (six bytes a character), and a mebibyte
 * for everything else. Any longer line is no message of ours.
 */
function largestNetworkLineBytes(limits: MediaLimits, maxMessageLength: number): number {
  return Math.ceil(Math.max(...Object.values(limits)) / 3) * 4 + 6 * maxMessageLength + MIB;
}

type CommitSync = Extract<DatabaseConfig, { dialect: 'sqlite' }>['commitSync'];
const COMMIT_SYNCS: readonly CommitSync[] = ['event-loop', 'thread-pool'];

function parseCommitSync(raw: string | undefined, problems: string[]): CommitSync {
  if (raw === undefined || raw === '') return 'thread-pool';
  const found = COMMIT_SYNCS.find((name) => name === raw);
  if (found === undefined) problems.push(`WAGW_SQLITE_COMMIT_SYNC must be one of ${COMMIT_SYNCS.join(', ')}; got "${raw}".`);
  return found ?? 'thread-pool';
}

function parseDatabaseUrl(
  raw: string | undefined,
  postgres: { poolSize: number; preparedStatements: boolean; idleInTransactionTimeoutMs: number },
  commitSync: CommitSync,
  problems: string[],
): DatabaseConfig {
  const url = raw === undefined || raw === '' ? `sqlite:${DEFAULT_SQLITE_PATH}` : raw;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === '') problems.push('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/wagw.db.');
    return { dialect: 'sqlite', path: path.resolve(file || DEFAULT_SQLITE_PATH), url, commitSync };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { dialect: 'postgres', connectionString: url, url, ...postgres };
  }
  problems.push('DATABASE_URL must start with sqlite:, postgres:// or postgresql://.');
  return { dialect: 'sqlite', path: path.resolve(DEFAULT_SQLITE_PATH), url, commitSync };
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

function parseSendPolicyPreset(raw: string | undefined, problems: string[]): PresetName {
  if (raw === undefined || raw === '') return 'off';
  if (isPresetName(raw)) return raw;
  problems.push(`WAGW_SEND_POLICY must be one of ${PRESET_NAMES.join(', ')}.`);
  return 'off';
}
