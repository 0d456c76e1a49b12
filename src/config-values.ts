import { isPlanName, planNames, type PlanAmounts, type PlanName } from './domain/plans.ts';

/**
 * The parsers of single configuration values, each turning one environment variable into its
 * typed value or a problem for config.ts to report; loadConfig composes them.
 */
const DEFAULT_RETRY_DELAYS_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

export function parseRetrySchedule(raw: string | undefined, problems: string[]): number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_RETRY_DELAYS_SECONDS;
  const delays = raw.split(',').map((part) => part.trim());
  if (delays.some((delay) => !/^\d+(\.\d+)?$/.test(delay))) {
    problems.push(`WAGW_WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, e.g. "5,300,1800"; got "${raw}".`);
    return DEFAULT_RETRY_DELAYS_SECONDS;
  }
  return delays.map(Number);
}

/**
 * `host:port,…` where host is an IPv4 address, a bracketed IPv6 address or a name. The port is
 * required: an entry opens one service, never a whole host.
 */
export function parseHostPorts(name: string, raw: string | undefined, problems: string[]): { host: string; port: number }[] {
  if (raw === undefined || raw.trim() === '') return [];
  const entries: { host: string; port: number }[] = [];
  for (const entry of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const port = match === null ? 0 : Number(match[2]);
    if (match === null || port < 1 || port > 65_535) {
      problems.push(`${name} must be comma-separated host:port entries, e.g. "127.0.0.1:4000,[::1]:4000"; "${entry}" is not one.`);
      continue;
    }
    entries.push({ host: match[1]!.replace(/^\[|\]$/g, '').toLowerCase(), port });
  }
  return entries;
}

export function parseBoolean(name: string, raw: string | undefined, problems: string[]): boolean {
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  problems.push(`${name} must be true or false; got "${raw}".`);
  return false;
}

// "true" means one proxy in front, not "believe every hop": with every hop believed, a client
// could name its own address in X-Forwarded-For and slip past the sign-in throttle.
export function parsePublicUrl(raw: string | undefined, problems: string[]): string {
  if (raw === undefined || raw.trim() === '') return '';
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    problems.push(`WAGW_PUBLIC_URL must be an absolute URL such as https://wa.example.com, not "${raw}".`);
    return '';
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    problems.push('WAGW_PUBLIC_URL must be an http(s) URL without a query, fragment or credentials.');
    return '';
  }
  return url.toString().replace(/\/+$/, '');
}

export function parseTrustProxy(raw: string | undefined): false | number | string {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') return 1;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

export function parseWebVersion(raw: string | undefined, problems: string[]): [number, number, number] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(raw.trim());
  if (match === null) {
    problems.push(`WAGW_WA_WEB_VERSION must look like 2.3000.1023223821; got "${raw}".`);
    return undefined;
  }
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

export function parseNodeUrl(raw: string | undefined, problems: string[]): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  try {
    const url = new URL(raw.trim());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/' && url.search === '' && url.username === '')
      return url.origin;
  } catch {
    // reported below
  }
  problems.push(`WAGW_NODE_URL must be this node's base URL as other nodes reach it, e.g. http://10.0.0.5:3000; got "${raw}".`);
  return null;
}

export function parseSandboxNetwork(raw: string | undefined, problems: string[]): { host: string; port: number } | null {
  if (raw === undefined || raw.trim() === '') return null;
  const match = /^tcp:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw.trim());
  const port = match === null ? 0 : Number(match[2]);
  if (match === null || port < 1 || port > 65_535) {
    problems.push(`WAGW_SANDBOX_NETWORK must be tcp://host:port of a running \`wagw sandbox-network\`; got "${raw}".`);
    return null;
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

// A short token could be guessed by anyone who can reach the port; 16 characters is the floor.
export function parseMetricsToken(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) {
    problems.push('WAGW_METRICS_TOKEN must be at least 16 visible ASCII characters without spaces (e.g. `openssl rand -hex 32`).');
    return undefined;
  }
  return raw;
}

export function parseSecretKey(raw: string | undefined, problems: string[]): Buffer | undefined {
  if (raw === undefined || raw === '') return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    problems.push('WAGW_SECRET_KEY must be 32 bytes, as 64 hex digits or base64 (e.g. `openssl rand -hex 32`).');
    return undefined;
  }
  return key;
}

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

/** WAGW_MEDIA_STORE and, for `s3`, its bucket settings; null for the filesystem store. */
export function parseS3Store(env: Record<string, string | undefined>, problems: string[]): S3StoreConfig | null {
  const kind = env.WAGW_MEDIA_STORE || 'filesystem';
  if (kind === 'filesystem') return null;
  if (kind !== 's3') {
    problems.push(`WAGW_MEDIA_STORE must be filesystem or s3, not ${JSON.stringify(kind)}.`);
    return null;
  }
  const bucket = env.WAGW_MEDIA_S3_BUCKET || '';
  if (bucket === '') problems.push('WAGW_MEDIA_S3_BUCKET is required when WAGW_MEDIA_STORE is s3.');
  let endpoint: string | null = null;
  if (env.WAGW_MEDIA_S3_ENDPOINT) {
    try {
      const url = new URL(env.WAGW_MEDIA_S3_ENDPOINT);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
      endpoint = url.toString().replace(/\/$/, '');
    } catch {
      problems.push(
        `WAGW_MEDIA_S3_ENDPOINT must be an http(s) URL, such as http://127.0.0.1:9000, not ${JSON.stringify(env.WAGW_MEDIA_S3_ENDPOINT)}.`,
      );
    }
  }
  const accessKeyId = env.WAGW_MEDIA_S3_ACCESS_KEY_ID || null;
  const secretAccessKey = env.WAGW_MEDIA_S3_SECRET_ACCESS_KEY || null;
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    problems.push(
      'WAGW_MEDIA_S3_ACCESS_KEY_ID and WAGW_MEDIA_S3_SECRET_ACCESS_KEY go together: set both, or neither to use the AWS credential chain.',
    );
  }
  const prefix = env.WAGW_MEDIA_S3_PREFIX || '';
  if (prefix !== '' && !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/$/.test(prefix)) {
    problems.push(`WAGW_MEDIA_S3_PREFIX must be path segments ending in /, such as gateway/media/, not ${JSON.stringify(prefix)}.`);
  }
  return {
    bucket,
    region: env.WAGW_MEDIA_S3_REGION || env.AWS_REGION || 'us-east-1',
    endpoint,
    // Services other than AWS mostly serve buckets by path, not by host name.
    forcePathStyle: env.WAGW_MEDIA_S3_FORCE_PATH_STYLE
      ? parseBoolean('WAGW_MEDIA_S3_FORCE_PATH_STYLE', env.WAGW_MEDIA_S3_FORCE_PATH_STYLE, problems)
      : endpoint !== null,
    prefix,
    accessKeyId,
    secretAccessKey,
  };
}

/**
 * Per-plan figures in MiB, as `starter:512,pro:2048,enterprise:10240`; a plan left out keeps its
 * default. Returned in bytes.
 */
export function parsePlanMebibytes(name: string, raw: string | undefined, defaultsMebibytes: PlanAmounts, problems: string[]): PlanAmounts {
  const amounts: Record<PlanName, number> = { ...defaultsMebibytes };
  for (const entry of (raw ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^([a-z]+):(\d{1,9})$/.exec(entry);
    if (match === null || !isPlanName(match[1]!) || Number(match[2]) < 1) {
      problems.push(
        `${name} must be comma-separated plan:MiB entries with a plan of ${planNames.join(', ')} and at least 1 MiB, e.g. ` +
          `"starter:512,pro:2048"; "${entry}" is not one.`,
      );
      continue;
    }
    amounts[match[1]] = Number(match[2]);
  }
  return Object.fromEntries(planNames.map((plan) => [plan, amounts[plan] * 1024 * 1024])) as Record<PlanName, number>;
}
