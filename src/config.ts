import path from 'node:path';

/**
 * The gateway's whole configuration, read from the environment once at start and frozen.
 * This module is the only reader of process.env; everything else is handed a Config.
 * Every option is documented in .env.example and in the README's configuration table.
 */
export interface Config {
  database: DatabaseConfig;
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    /** Bounds open sockets, since no timer ever cuts a slow request (see docs/adr). */
    maxConnections: number;
    shutdownGraceMs: number;
  };
  apiKeyPrefix: string;
  maxMessageLength: number;
  admin: { email: string | undefined; password: string | undefined };
  logLevel: string;
  groupCommit: { maxBatchSize: number };
  version: string;
}

export type DatabaseConfig =
  | { dialect: 'sqlite'; path: string; url: string }
  | { dialect: 'postgres'; connectionString: string; url: string; poolSize: number };

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

  const config: Config = {
    database: parseDatabaseUrl(env.DATABASE_URL, integer('WAGW_DATABASE_POOL_SIZE', 10, 1), problems),
    http: {
      host: env.HOST || '127.0.0.1',
      port: integer('PORT', 3000, 0, 65_535),
      bodyLimitBytes: integer('WAGW_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
      maxConnections: integer('WAGW_MAX_CONNECTIONS', 4096, 1),
      shutdownGraceMs: integer('WAGW_SHUTDOWN_GRACE_MS', 10_000, 0),
    },
    apiKeyPrefix,
    maxMessageLength: integer('WAGW_MAX_MESSAGE_LENGTH', 65_536, 1),
    admin: { email: env.WAGW_ADMIN_EMAIL || undefined, password: env.WAGW_ADMIN_PASSWORD || undefined },
    logLevel,
    groupCommit: { maxBatchSize: integer('WAGW_GROUP_COMMIT_MAX_BATCH', 256, 1) },
    version: VERSION,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

function parseDatabaseUrl(raw: string | undefined, poolSize: number, problems: string[]): DatabaseConfig {
  const url = raw === undefined || raw === '' ? `sqlite:${DEFAULT_SQLITE_PATH}` : raw;
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === '') problems.push('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/wagw.db.');
    return { dialect: 'sqlite', path: path.resolve(file || DEFAULT_SQLITE_PATH), url };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { dialect: 'postgres', connectionString: url, url, poolSize };
  }
  problems.push('DATABASE_URL must start with sqlite:, postgres:// or postgresql://.');
  return { dialect: 'sqlite', path: path.resolve(DEFAULT_SQLITE_PATH), url };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
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
