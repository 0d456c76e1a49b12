import { PRESET_NAMES } from './domain/send-policy.ts';
import {
  custom,
  onlyWhen,
  flag,
  integer,
  oneOf,
  parseDatabaseUrl,
  parseHostPorts,
  parseMetricsToken,
  parseNodeUrl,
  parsePublicUrl,
  parseS3Endpoint,
  parseSandboxNetwork,
  parseSecretKey,
  parseTrustProxy,
  parseWebVersion,
  planMebibytes,
  retrySchedule,
  text,
  type Variable,
} from './config-values.ts';

/**
 * Every environment variable the gateway reads: its name, kind, default, bounds and meaning, in
 * the order of the README's configuration table, which `npm run docs:config` writes from this
 * object (test/unit/config-table.test.ts fails while the two differ). src/config.ts reads these
 * values from the environment and arranges them into the Config it hands out; nothing else reads
 * the environment (docs/adr/0060-declarative-config.md).
 */
export const DEFAULT_SQLITE_PATH = './data/wagw.db';
const MIB = 1024 * 1024;
/** The S3 settings are read only while WAGW_MEDIA_STORE chooses s3, so left-over ones never stop a start. */
const s3Only = <T>(variable: Variable<T>) => onlyWhen('WAGW_MEDIA_STORE', 's3', variable);

export const VARIABLES = {
  DATABASE_URL: custom(parseDatabaseUrl(DEFAULT_SQLITE_PATH), {
    shown: `\`sqlite:${DEFAULT_SQLITE_PATH}\``,
    meaning: '`sqlite:PATH`, or `postgres://…` / `postgresql://…`',
  }),
  WAGW_DATABASE_POOL_SIZE: integer({ default: 10, min: 1, meaning: 'PostgreSQL pool size' }),
  WAGW_DATABASE_PREPARED_STATEMENTS: flag({
    default: true,
    meaning:
      'PostgreSQL: run the hot statements as prepared statements; set `false` behind a pooler that moves clients between server connections (PgBouncer in transaction mode)',
  }),
  HOST: text({ default: '127.0.0.1', meaning: 'bind address; `0.0.0.0` to accept other machines' }),
  PORT: integer({ default: 3000, min: 0, max: 65_535, meaning: 'HTTP port' }),
  WAGW_MAX_CONNECTIONS: integer({
    default: 4096,
    min: 1,
    meaning: 'open connections the server accepts; requests are never timed out, so this is the bound',
  }),
  WAGW_MAX_CONNECTIONS_PER_IPV6_48: integer({ default: 1024, min: 1, meaning: 'open connections one IPv6 /48 may hold, across its /64s' }),
  WAGW_HEADERS_TIMEOUT_MS: integer({
    default: 60_000,
    min: 100,
    meaning:
      "how long a client may take to send a request's headers (bodies have no deadline); past it, `408 headers_timeout` and the connection closes",
  }),
  WAGW_MAX_CONNECTIONS_PER_IP: integer({
    default: 256,
    min: 1,
    meaning:
      "open connections one client address (an IPv6 /64) may hold; behind a reverse proxy the proxy's address is what counts ([operations](docs/operations.md#connections-and-timeouts))",
  }),
  WAGW_UNAUTHENTICATED_BODY_TIMEOUT_MS: integer({
    default: 10_000,
    min: 100,
    meaning:
      'how long a dashboard form sent without a session (sign-in, an invite) may take to arrive; past it, `408 body_timeout` and the connection closes ([operations](docs/operations.md#connections-and-timeouts))',
  }),
  WAGW_BODY_LIMIT_BYTES: integer({ default: 1024 * 1024, min: 1024, meaning: 'largest request body (`413` above it)' }),
  WAGW_MAX_MESSAGE_LENGTH: integer({ default: 65_536, min: 1, meaning: 'longest message, in characters' }),
  WAGW_MAX_PENDING_SENDS: integer({
    default: 1_000,
    min: 1,
    none: '0',
    meaning:
      'sends one node works on at once; past it a send is answered 503 `overloaded` with `Retry-After: 1` at once; `0` for no cap ([operations](docs/operations.md#overload))',
  }),
  WAGW_SANDBOX_RECEIVES_PER_MINUTE: integer({
    default: 60,
    min: 1,
    meaning:
      'simulated incoming messages one account may make a minute (`/sandbox/receive`, `/sandbox/poll_vote` and the dashboard form together); past it, `429 rate_limited` with `Retry-After`',
  }),
  WAGW_SANDBOX_DELIVERY_WAIT_MS: integer({
    default: 2_000,
    min: 0,
    max: 600_000,
    meaning:
      "how long a sandbox send waits for a connected recipient to store the message before it is answered anyway (0–600000); a slow machine's test runs raise it",
  }),
  WAGW_SANDBOX_LINK_QR_SECONDS: integer({
    default: 20,
    min: 1,
    max: 600,
    meaning:
      'how often a sandbox number being linked over the operator API offers a new QR, as WhatsApp replaces its QR; an attempt expires after six ([operator API](docs/operator-api.md#a-numbers-session))',
  }),
  WAGW_SHUTDOWN_GRACE_MS: integer({
    default: 10_000,
    min: 0,
    meaning:
      'how long a stop may take: the sessions stop and leases are released first, then in-flight requests get this less up to 2 s kept for the last flush, then their connections are closed',
  }),
  WAGW_SHUTDOWN_UNUSED_CONNECTION_MS: integer({
    default: 2_000,
    min: 0,
    meaning:
      'during a stop, how long a connection that has sent no request yet is kept open for one: a client on a busy host may connect and write its request a moment later; one still silent after this is closed, so an abandoned connection does not hold the stop',
  }),
  WAGW_TRUST_PROXY: custom(parseTrustProxy, {
    shown: '`false`',
    meaning:
      'believe `X-Forwarded-For`/`-Proto` from reverse proxies: `true` (one proxy in front), a number of proxy hops, or their addresses/CIDRs comma-separated. Gives real client addresses to sign-in throttling and detects HTTPS for the `__Host-` cookie',
  }),
  WAGW_SESSION_IDLE_MINUTES: integer({ default: 60, min: 1, max: 10_080, meaning: 'a dashboard session unused this long is over' }),
  WAGW_SESSION_MAX_HOURS: integer({
    default: 12,
    min: 1,
    max: 8_760,
    meaning: 'a dashboard session is over this long after sign-in, however busy',
  }),
  WAGW_BAILEYS_SEND_GAP_MS: integer({
    default: 0,
    min: 0,
    meaning: 'real numbers: the least time between two sends from one number, as protection against bans; `0` is off',
  }),
  WAGW_BAILEYS_SEND_JITTER_MS: integer({ default: 0, min: 0, meaning: 'real numbers: up to this much more, at random, on top of the gap' }),
  WAGW_NEW_CHAT_QUOTA_CHECK_MINUTES: integer({
    default: 60,
    min: 1,
    max: 1_440,
    meaning:
      "real numbers: how often a connected session reads WhatsApp's cap on its new chats, besides on connecting, after a 475 and as WhatsApp pushes it ([send governor](docs/send-governor.md#whatsapps-cap-on-new-chats))",
  }),
  WAGW_WA_WEB_VERSION: custom(parseWebVersion, {
    shown: "Baileys' built-in",
    meaning: 'the WhatsApp Web version to announce, e.g. `2.3000.1023223821`, for when WhatsApp refuses the built-in one',
  }),
  WAGW_CLOUD_API_URL: text({
    default: 'https://graph.facebook.com',
    pattern: /^https?:\/\/[^/?#\s]+$/,
    problem: (name, value) => `${name} must be an http(s) origin with no path, such as https://graph.facebook.com; got "${value}".`,
    meaning:
      "Cloud API numbers: the origin of Meta's Graph API, the only address the `cloud` engine calls; a local stand-in for tests and rehearsals ([Cloud API](docs/cloud-api.md))",
  }),
  WAGW_CLOUD_API_VERSION: text({
    default: 'v23.0',
    pattern: /^v\d{1,3}\.\d{1,2}$/,
    problem: (name, value) => `${name} must be a Graph API version such as v23.0; got "${value}".`,
    meaning: 'Cloud API numbers: the Graph API version in every request path',
  }),
  WAGW_CLOUD_PAIR_RATE_PAUSE_MS: integer({
    default: 6_000,
    min: 1_000,
    max: 3_600_000,
    meaning:
      "Cloud API numbers: how long Meta's pair rate limit (131056, too many messages to one person) holds the number's sends; Meta allows about one message every six seconds to one person",
  }),
  WAGW_KEY_PREFIX: text({
    default: 'wagw',
    pattern: /^[a-z][a-z0-9]{0,15}$/,
    problem: (name, value) => `${name} must be 1-16 lowercase letters or digits, starting with a letter; got "${value}".`,
    meaning: 'the `<prefix>` of new API keys; keys made under an earlier prefix keep working',
  }),
  // The defaults are applied where the first operator is made (src/accounts), not here.
  WAGW_ADMIN_EMAIL: text({ default: null, shown: '`admin@wagw.local`', meaning: "the first operator's email, used on first start" }),
  WAGW_ADMIN_PASSWORD: text({ default: null, shown: 'random, printed once', meaning: "the first operator's password" }),
  WAGW_GROUP_COMMIT_MAX_BATCH: integer({ default: 256, min: 1, meaning: 'most writes committed together in one transaction' }),
  WAGW_SQLITE_COMMIT_SYNC: oneOf({
    values: ['event-loop', 'thread-pool'],
    default: 'thread-pool',
    meaning:
      "SQLite only: where each commit's fsync of the log runs. `thread-pool` commits with synchronous=NORMAL and syncs the log on libuv's thread pool before the write is reported; `event-loop` (synchronous=FULL) stalls every request while it runs. Both keep a 200's row on disk; see [ADR 0037](docs/adr/0037-sqlite-fsync-off-the-event-loop.md)",
  }),
  WAGW_GROUP_COMMIT: flag({
    default: true,
    meaning:
      '`false` commits every write in a transaction of its own: as durable, but slower (see docs/benchmarks.md); for measuring, not for production',
  }),
  LOG_LEVEL: oneOf({
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    meaning: 'pino level',
  }),
  WAGW_METRICS_TOKEN: custom(parseMetricsToken, {
    shown: 'unset: no metrics',
    meaning:
      'the bearer token `GET /metrics` (Prometheus) asks for, 16 or more characters; unset, `/metrics` answers 404. See [docs/operations.md](docs/operations.md#metrics)',
  }),
  WAGW_DATA_DIR: text({ default: './data', meaning: 'where the gateway keeps its own files (the generated secret key)' }),
  WAGW_SECRET_KEY: custom(parseSecretKey, {
    shown: 'generated into `WAGW_DATA_DIR/secret.key`',
    meaning:
      '32 bytes (64 hex digits or base64) that encrypt webhook secrets at rest; set it when several processes share a database, and for `wagw sandbox-network` and its nodes',
  }),
  WAGW_NODE_NAME: text({
    default: null,
    shown: 'the host name',
    meaning: 'what the operator calls this node on the Cluster page and in `wagw cluster status` ([cluster](docs/cluster.md))',
  }),
  WAGW_NODE_URL: custom(parseNodeUrl, {
    shown: 'the listening address',
    meaning: 'where the other nodes reach this one, e.g. `http://10.0.0.5:3000`; set it on every node of a cluster',
  }),
  WAGW_LEASE_TTL_MS: integer({
    default: 15_000,
    min: 1_000,
    max: 600_000,
    meaning:
      "how long a node's hold on a number lasts unless renewed (every third of it); a dead node's numbers move after at most this long",
  }),
  WAGW_MAX_SESSIONS_PER_NODE: integer({
    default: null,
    min: 1,
    shown: 'no cap',
    meaning: 'the most numbers one node serves, whatever its fair share',
  }),
  WAGW_SESSION_STARTS_PER_SECOND: integer({
    default: 4,
    min: 1,
    max: 1_000,
    meaning:
      'the most WhatsApp (Baileys) sessions one node starts a second, so a cold start or a takeover of many numbers is not a burst of logins; also how fast a node below its share asks the others for numbers ([ADR 0041](docs/adr/0041-node-leases-and-pulled-handovers.md))',
  }),
  WAGW_OWNER_WAIT_MS: integer({
    default: 5_000,
    min: 0,
    max: 120_000,
    meaning:
      'how long a request for a number whose node just went away waits for the takeover before `503 number_not_connected` with `Retry-After`',
  }),
  WAGW_HANDOVER_DRAIN_MS: integer({
    default: 5_000,
    min: 0,
    max: 120_000,
    meaning:
      'the longest a node giving a number up (SIGTERM, a handover to a less loaded node) waits for the requests and sends already under way on it before it stops the session and releases the lease; keep it below `WAGW_SHUTDOWN_GRACE_MS`',
  }),
  WAGW_NODE_CALL_TIMEOUT_MS: integer({
    default: 60_000,
    min: 1_000,
    max: 600_000,
    meaning:
      'the longest a call to another node (a forwarded send) may take; an owner that stops answering the liveness probes is given up within about a second (docs/cluster.md)',
  }),
  WAGW_SANDBOX_NETWORK: custom(parseSandboxNetwork, {
    shown: 'in this process',
    meaning:
      '`tcp://host:port` of a `wagw sandbox-network` that all nodes of a cluster share; the network and every node need the same `WAGW_SECRET_KEY`',
  }),
  WAGW_SANDBOX_NETWORK_MAX_LINE_BYTES: integer({
    default: null,
    min: 65_536,
    shown: 'the largest media limit in base64, plus 6 × `WAGW_MAX_MESSAGE_LENGTH`, plus 1 MiB (about 134 MiB)',
    meaning:
      'the longest line the shared sandbox network and a node read from each other; a longer one closes the connection ([cluster](docs/cluster.md#the-shared-sandbox-network))',
  }),
  WAGW_INTERRUPTED_SEND_AFTER_MS: integer({
    default: 60_000,
    min: 1_000,
    meaning:
      'a send still `queued` this long was cut off by a crash: it is failed (`interrupted`) and an Idempotency-Key claim this old is taken over; also how often that sweep runs',
  }),
  WAGW_SEND_POLICY: oneOf({
    values: PRESET_NAMES,
    default: 'off',
    problem: (name) => `${name} must be one of ${PRESET_NAMES.join(', ')}.`,
    meaning:
      "the gateway's send policy for accounts and numbers without one: `off`, `standard` or `cautious` ([send governor](docs/send-governor.md))",
  }),
  WAGW_SEND_EXPIRY_HOURS: integer({
    default: 24,
    min: 1,
    max: 24 * 366,
    meaning: "how long a message waits in its number's send queue at most, unless the send gives `expires_at`",
  }),
  WAGW_SEND_AT_HORIZON_DAYS: integer({ default: 30, min: 1, max: 366, meaning: "how far ahead a send's `send_at` may be" }),
  WAGW_SEND_QUEUE_MAX_KIB_PER_NUMBER: integer({
    default: 65_536,
    min: 64,
    meaning:
      "the message content (text and structured, UTF-8) a number's send queue may hold, in KiB (64 MiB); a send that would have to wait past it is `429 queue_full` with `Retry-After` ([send governor](docs/send-governor.md))",
  }),
  WAGW_SEND_QUEUE_CHECK_MS: integer({
    default: 10_000,
    min: 100,
    max: 600_000,
    meaning: 'the longest the send queue runner sleeps without looking for due messages (bounds the pick-up after a failover)',
  }),
  WAGW_MEDIA_DIR: text({
    default: null,
    shown: '`WAGW_DATA_DIR/media`',
    meaning: 'where media bytes are kept (never in the database); with S3, where files in flight are spooled',
  }),
  WAGW_NUMBER_CHECKS_PER_MINUTE: integer({
    default: 60,
    min: 1,
    max: 10_000,
    meaning:
      'WhatsApp lookups `POST /check_numbers` may make per number and minute (remembered answers are free); past it, `429` with `Retry-After`',
  }),
  WAGW_TYPING_SECONDS: integer({
    default: 25,
    min: 1,
    max: 300,
    meaning: 'how long `POST /typing`\'s "typing…" lasts unless sent again; then the gateway ends it',
  }),
  WAGW_PROFILE_CACHE_SECONDS: integer({
    default: 300,
    min: 0,
    max: 86_400,
    meaning:
      "how long `GET /contacts/{phone}/profile` answers a contact's profile (and its picture, kept in the media store) from memory before asking WhatsApp again; 0 asks every time",
  }),
  WAGW_MEDIA_STORE: oneOf({
    values: ['filesystem', 's3'],
    default: 'filesystem',
    problem: (name, raw) => `${name} must be filesystem or s3, not ${JSON.stringify(raw)}.`,
    meaning:
      '`s3` keeps media in an S3-compatible bucket (AWS, MinIO, R2), set up by the `WAGW_MEDIA_S3_` variables below, which are read only then (docs/media.md)',
  }),
  WAGW_MEDIA_S3_BUCKET: s3Only(text({ default: '', shown: '(required with `s3`)', meaning: 'S3: the bucket, which must exist' })),
  WAGW_MEDIA_S3_REGION: s3Only(text({ default: null, shown: '`AWS_REGION`, else `us-east-1`', meaning: "S3: the bucket's region" })),
  AWS_REGION: text({
    default: null,
    shown: '(none)',
    meaning: "S3: the AWS SDK's own region setting, used when `WAGW_MEDIA_S3_REGION` is not set",
  }),
  WAGW_MEDIA_S3_ENDPOINT: s3Only(
    custom(parseS3Endpoint, {
      shown: 'AWS',
      meaning: "S3: the service's URL for anything but AWS, e.g. `http://minio:9000`",
    }),
  ),
  WAGW_MEDIA_S3_FORCE_PATH_STYLE: s3Only(
    flag({
      default: null,
      shown: '`true` with an endpoint, else `false`',
      meaning: 'S3: address the bucket by path rather than host name, as most services other than AWS want',
    }),
  ),
  WAGW_MEDIA_S3_PREFIX: s3Only(
    text({
      default: '',
      pattern: /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/$/,
      problem: (name, value) => `${name} must be path segments ending in /, such as gateway/media/, not ${JSON.stringify(value)}.`,
      shown: 'empty',
      meaning: "S3: prepended to every object key, path segments ending in `/`, so that one bucket can hold several gateways' media",
    }),
  ),
  WAGW_MEDIA_S3_ACCESS_KEY_ID: s3Only(
    text({
      default: null,
      shown: "the SDK's chain",
      meaning:
        "S3: the access key; set it and `WAGW_MEDIA_S3_SECRET_ACCESS_KEY` both or neither; without them the SDK's own chain is used (`AWS_ACCESS_KEY_ID`, a profile, an instance role)",
    }),
  ),
  WAGW_MEDIA_S3_SECRET_ACCESS_KEY: s3Only(text({ default: null, shown: "the SDK's chain", meaning: "S3: the access key's secret" })),
  // WhatsApp's own limits: 16 MiB for photos, video and sound, 100 MiB for documents, 500 KiB for stickers.
  WAGW_MEDIA_MAX_IMAGE_BYTES: integer({
    default: 16 * MIB,
    min: 1,
    meaning: 'largest image; a file over the limit of its kind (this and the four below) is refused, `400 media_too_large` with the limit',
  }),
  WAGW_MEDIA_MAX_VIDEO_BYTES: integer({ default: 16 * MIB, min: 1, meaning: 'largest video' }),
  WAGW_MEDIA_MAX_AUDIO_BYTES: integer({ default: 16 * MIB, min: 1, meaning: 'largest audio file or voice note' }),
  WAGW_MEDIA_MAX_DOCUMENT_BYTES: integer({ default: 100 * MIB, min: 1, meaning: 'largest document' }),
  WAGW_MEDIA_MAX_STICKER_BYTES: integer({ default: 500 * 1024, min: 1, meaning: 'largest sticker' }),
  WAGW_MEDIA_RETENTION_DAYS: integer({ default: 30, min: 1, max: 3650, meaning: 'how long sent and received files are kept' }),
  WAGW_MEDIA_UPLOAD_TTL_HOURS: integer({ default: 24, min: 1, max: 8760, meaning: 'how long an upload no message uses is kept' }),
  WAGW_MEDIA_LINK_TTL_HOURS: integer({
    default: 24,
    min: 1,
    max: 168,
    meaning: 'how long the signed download links in webhooks last (at most 168)',
  }),
  WAGW_PUBLIC_URL: custom(parsePublicUrl, {
    shown: 'unset: links are paths',
    meaning: "the gateway's address as clients reach it, e.g. `https://wa.example.com`, for absolute media links in answers and webhooks",
  }),
  WAGW_MEDIA_RECEIVE_TIMEOUT_MS: integer({
    default: 30_000,
    min: 100,
    meaning:
      "how long an incoming file's download may hold its message back; then the message goes out with the file `unavailable`, and retries follow (docs/media.md)",
  }),
  WAGW_MEDIA_FETCH_CONNECT_TIMEOUT_MS: integer({
    default: 10_000,
    min: 100,
    meaning: "`media.url`: how long connecting to the file's host may take",
  }),
  WAGW_MEDIA_FETCH_IDLE_TIMEOUT_MS: integer({
    default: 30_000,
    min: 100,
    meaning: "`media.url`: how long the file's host may go silent; then `422 media_url_unreachable`",
  }),
  WAGW_MEDIA_STORAGE_QUOTA_MIB: planMebibytes(
    { starter: 512, pro: 5_120, enterprise: 51_200 },
    'MiB of unexpired uploaded and sent files an account may hold, by plan (each plan given is replaced, the rest keep their default); past it, `413 storage_quota_exceeded` (docs/media.md)',
  ),
  WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW: planMebibytes(
    { starter: 512, pro: 2_048, enterprise: 10_240 },
    'MiB an account may upload through `POST /media` per window, by plan; past it, `429 upload_rate_exceeded` with `Retry-After`',
  ),
  WAGW_MEDIA_FETCH_MIB_PER_WINDOW: planMebibytes(
    { starter: 512, pro: 2_048, enterprise: 10_240 },
    "MiB the gateway fetches for an account's `media.url`s and link previews per window, by plan, failed fetches included; past it, `429 media_fetch_budget_exceeded` with `Retry-After`",
  ),
  WAGW_LINK_PREVIEW_FETCHES_PER_NUMBER: integer({
    default: 600,
    min: 1,
    meaning:
      '`link_preview: true`: fetches (a page, its image) each number may have made per window; past it, `429 media_fetch_budget_exceeded` with `Retry-After` and `meta.field` `link_preview`. Their bytes count in `WAGW_MEDIA_FETCH_MIB_PER_WINDOW` (docs/api.md#link-previews)',
  }),
  WAGW_MEDIA_BYTE_WINDOW_SECONDS: integer({
    default: 3_600,
    min: 1,
    max: 86_400,
    meaning: 'the window of the two budgets above, which refill evenly over it',
  }),
  WAGW_MEDIA_MIN_FREE_BYTES: integer({
    default: 1_024 * MIB,
    min: 0,
    meaning:
      "free space kept on the media directory's disk and the SQLite database's: below it, no file is stored (`503 insufficient_storage`; incoming files are retried later)",
  }),
  WAGW_MEDIA_MIN_FREE_PERCENT: integer({
    default: 2,
    min: 0,
    max: 99,
    meaning: 'the same floor as a share of the disk; the larger of the two applies',
  }),
  WAGW_WEBHOOK_TIMEOUT_MS: integer({ default: 15_000, min: 100, meaning: 'how long an endpoint has to answer' }),
  WAGW_WEBHOOK_RETRY_SCHEDULE: retrySchedule('seconds before each retry (±20 % jitter); then the delivery fails'),
  WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: custom(parseHostPorts, {
    shown: '(none)',
    meaning:
      "**weakens safety, narrowly**: private receivers webhooks may reach, as `host:port,…` (e.g. `127.0.0.1:4000`); each entry opens exactly one port of one host, to every tenant's webhooks and to the gateway's fetches for them (`media.url`, link previews), which share the webhooks' address guard",
  }),
  WAGW_WEBHOOK_ALLOW_PRIVATE: flag({
    default: false,
    meaning:
      "**weakens safety**: lets every tenant's webhooks reach every loopback and private address; kept for old setups, warned about at start; use the allow-list above",
  }),
  WAGW_WEBHOOK_MAX_IN_FLIGHT: integer({
    default: 256,
    min: 1,
    meaning:
      'webhook requests in flight at once, overall; a request unanswered after a second stops counting, up to as many again (docs/webhooks.md)',
  }),
  WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: integer({ default: 16, min: 1, meaning: 'webhook requests in flight at once to one webhook' }),
  WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND: integer({
    default: 1_000,
    min: 1,
    meaning:
      'webhook requests a second to one destination host (`host:port`), whatever webhooks point at it; over it, deliveries wait in the outbox',
  }),
  WAGW_WEBHOOKS_PER_ACCOUNT: integer({
    default: 10,
    min: 1,
    meaning: 'webhooks one account may have; past it, `409 webhook_limit_reached`',
  }),
  WAGW_WEBHOOK_POLL_INTERVAL_MS: integer({
    default: 1_000,
    min: 10,
    meaning: "how often the worker looks for due retries and other processes' events",
  }),
  WAGW_WEBHOOK_ATTEMPT_RETENTION_DAYS: integer({ default: 30, min: 1, meaning: 'how long attempts and finished deliveries are kept' }),
  WAGW_WEBHOOK_DISABLE_AFTER_FAILING_DAYS: integer({
    default: 5,
    min: 1,
    meaning: 'a webhook failing without a success this long is disabled',
  }),
} satisfies Record<string, Variable<unknown>>;

/** Each variable's typed value, as src/config.ts reads it. */
export type ConfigValues = { readonly [Name in keyof typeof VARIABLES]: (typeof VARIABLES)[Name] extends Variable<infer T> ? T : never };
