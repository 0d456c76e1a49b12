import { isPlanName, planNames, type PlanAmounts, type PlanName } from './domain/plans.ts';

/**
 * The kinds of configuration value (a bounded whole number, a flag, one of a list, …) and the few
 * parsers of their own that some variables need. src/config-variables.ts declares every variable
 * with one of these; each knows how to read its variable and how the README's table shows it, so
 * the table and the parsing cannot drift apart (docs/adr/0060-declarative-config.md).
 */
export interface Variable<T> {
  /** The README table's "default" column, in Markdown. */
  readonly shown: string;
  /** The README table's "meaning" column, in Markdown. */
  readonly meaning: string;
  /**
   * The typed value of `raw` (undefined when the variable is not set). A value that cannot be
   * used pushes a problem naming the variable and returns the default, so that every problem
   * is reported at once.
   */
  read(name: string, raw: string | undefined, problems: string[]): T;
  /** Read only while another variable has this value; otherwise taken as unset, unchecked. */
  readonly onlyWhen?: { readonly variable: string; readonly is: string };
}

interface Documented {
  meaning: string;
  /** Overrides the default column, for defaults that are not a plain value. */
  shown?: string;
}

const code = (value: string | number): string => `\`${value}\``;

/** An empty variable counts as unset, as a shell's `VAR=` leaves it. */
const isUnset = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

interface IntegerOptions extends Documented {
  default: number | null;
  min: number;
  max?: number;
  /** A value meaning "no limit" (null), read before the bounds. */
  none?: string;
}

export function integer(options: IntegerOptions & { default: null }): Variable<number | null>;
export function integer(options: IntegerOptions & { none: string }): Variable<number | null>;
export function integer(options: IntegerOptions & { default: number }): Variable<number>;
export function integer({ default: fallback, min, max = Number.MAX_SAFE_INTEGER, none, ...doc }: IntegerOptions): Variable<number | null> {
  return {
    shown: doc.shown ?? code(fallback ?? ''),
    meaning: doc.meaning,
    read(name, raw, problems) {
      if (isUnset(raw)) return fallback;
      if (raw === none) return null;
      // Only plain decimal digits: Number() would also read " " as 0 and "0x10" as 16.
      const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < min || value > max) {
        problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}".`);
        return fallback;
      }
      return value;
    },
  };
}

export function flag(options: Documented & { default: null }): Variable<boolean | null>;
export function flag(options: Documented & { default: boolean }): Variable<boolean>;
export function flag({ default: fallback, ...doc }: Documented & { default: boolean | null }): Variable<boolean | null> {
  return {
    shown: doc.shown ?? code(String(fallback)),
    meaning: doc.meaning,
    read(name, raw, problems) {
      if (isUnset(raw)) return fallback;
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      problems.push(`${name} must be true or false; got "${raw}".`);
      return fallback;
    },
  };
}

interface TextOptions extends Documented {
  default: string | null;
  /** What a set value must match; `problem` words the refusal. */
  pattern?: RegExp;
  problem?: (name: string, value: string) => string;
}

export function text(options: TextOptions & { default: null }): Variable<string | null>;
export function text(options: TextOptions & { default: string }): Variable<string>;
export function text({ default: fallback, pattern, problem, ...doc }: TextOptions): Variable<string | null> {
  return {
    shown: doc.shown ?? code(fallback ?? ''),
    meaning: doc.meaning,
    read(name, raw, problems) {
      const value = isUnset(raw) ? fallback : raw;
      if (value && pattern && !pattern.test(value)) {
        problems.push(problem ? problem(name, value) : `${name} is malformed; got "${value}".`);
        return fallback;
      }
      return value;
    },
  };
}

export function oneOf<const T extends string>({
  values,
  default: fallback,
  problem = (name, raw) => `${name} must be one of ${values.join(', ')}; got "${raw}".`,
  ...doc
}: Documented & { values: readonly T[]; default: T; problem?: (name: string, raw: string) => string }): Variable<T> {
  return {
    shown: doc.shown ?? code(fallback),
    meaning: doc.meaning,
    read(name, raw, problems) {
      if (isUnset(raw)) return fallback;
      const found = values.find((value) => value === raw);
      if (found === undefined) problems.push(problem(name, raw));
      return found ?? fallback;
    },
  };
}

/** The variable read only while another variable has a value (the S3 settings, with WAGW_MEDIA_STORE=s3). */
export function onlyWhen<T>(variable: string, is: string, read: Variable<T>): Variable<T> {
  return { ...read, onlyWhen: { variable, is } };
}

/** A variable with a parser of its own, which also decides what counts as unset. */
export function custom<T>(read: Variable<T>['read'], doc: Required<Documented>): Variable<T> {
  return { ...doc, read };
}

const DEFAULT_RETRY_DELAYS_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

export function retrySchedule(meaning: string): Variable<number[]> {
  return {
    shown: code(DEFAULT_RETRY_DELAYS_SECONDS.join(',')),
    meaning,
    read(name, raw, problems) {
      if (raw === undefined || raw.trim() === '') return DEFAULT_RETRY_DELAYS_SECONDS;
      const delays = raw.split(',').map((part) => part.trim());
      if (delays.some((delay) => !/^\d+(\.\d+)?$/.test(delay))) {
        problems.push(`${name} must be comma-separated seconds, e.g. "5,300,1800"; got "${raw}".`);
        return DEFAULT_RETRY_DELAYS_SECONDS;
      }
      return delays.map(Number);
    },
  };
}

/**
 * Per-plan figures in MiB, as `starter:512,pro:2048,enterprise:10240`; a plan left out keeps its
 * default. Read in bytes.
 */
export function planMebibytes(defaultsMebibytes: PlanAmounts, meaning: string): Variable<PlanAmounts> {
  return {
    shown: code(planNames.map((plan) => `${plan}:${defaultsMebibytes[plan]}`).join(',')),
    meaning,
    read(name, raw, problems) {
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
    },
  };
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

export function parsePublicUrl(name: string, raw: string | undefined, problems: string[]): string {
  if (raw === undefined || raw.trim() === '') return '';
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    problems.push(`${name} must be an absolute URL such as https://wa.example.com, not "${raw}".`);
    return '';
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    problems.push(`${name} must be an http(s) URL without a query, fragment or credentials.`);
    return '';
  }
  return url.toString().replace(/\/+$/, '');
}

// "true" means one proxy in front, not "believe every hop": with every hop believed, a client
// could name its own address in X-Forwarded-For and slip past the sign-in throttle.
export function parseTrustProxy(_name: string, raw: string | undefined): false | number | string {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') return 1;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

export function parseWebVersion(name: string, raw: string | undefined, problems: string[]): [number, number, number] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(raw.trim());
  if (match === null) {
    problems.push(`${name} must look like 2.3000.1023223821; got "${raw}".`);
    return undefined;
  }
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

export function parseNodeUrl(name: string, raw: string | undefined, problems: string[]): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  try {
    const url = new URL(raw.trim());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/' && url.search === '' && url.username === '')
      return url.origin;
  } catch {
    // reported below
  }
  problems.push(`${name} must be this node's base URL as other nodes reach it, e.g. http://10.0.0.5:3000; got "${raw}".`);
  return null;
}

export function parseSandboxNetwork(name: string, raw: string | undefined, problems: string[]): { host: string; port: number } | null {
  if (raw === undefined || raw.trim() === '') return null;
  const match = /^tcp:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw.trim());
  const port = match === null ? 0 : Number(match[2]);
  if (match === null || port < 1 || port > 65_535) {
    problems.push(`${name} must be tcp://host:port of a running \`wagw sandbox-network\`; got "${raw}".`);
    return null;
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

// A short token could be guessed by anyone who can reach the port; 16 characters is the floor.
// The refusal never echoes the value: it is a secret.
export function parseMetricsToken(name: string, raw: string | undefined, problems: string[]): string | undefined {
  if (isUnset(raw)) return undefined;
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) {
    problems.push(`${name} must be at least 16 visible ASCII characters without spaces (e.g. \`openssl rand -hex 32\`).`);
    return undefined;
  }
  return raw;
}

export function parseSecretKey(name: string, raw: string | undefined, problems: string[]): Buffer | undefined {
  if (isUnset(raw)) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    problems.push(`${name} must be 32 bytes, as 64 hex digits or base64 (e.g. \`openssl rand -hex 32\`).`);
    return undefined;
  }
  return key;
}

export function parseS3Endpoint(name: string, raw: string | undefined, problems: string[]): string | null {
  if (isUnset(raw)) return null;
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString().replace(/\/$/, '');
  } catch {
    // reported below
  }
  problems.push(`${name} must be an http(s) URL, such as http://127.0.0.1:9000, not ${JSON.stringify(raw)}.`);
  return null;
}

export type DatabaseUrl = { dialect: 'sqlite'; path: string; url: string } | { dialect: 'postgres'; url: string };

/** `sqlite:PATH` (PATH as given; config.ts resolves it), `postgres://…` or `postgresql://…`. */
export function parseDatabaseUrl(defaultPath: string) {
  return (name: string, raw: string | undefined, problems: string[]): DatabaseUrl => {
    const url = isUnset(raw) ? `sqlite:${defaultPath}` : raw;
    if (url.startsWith('sqlite:')) {
      const file = url.slice('sqlite:'.length);
      if (file === '') problems.push(`${name} "sqlite:" needs a file path, e.g. sqlite:${defaultPath}.`);
      return { dialect: 'sqlite', path: file || defaultPath, url };
    }
    if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { dialect: 'postgres', url };
    problems.push(`${name} must start with sqlite:, postgres:// or postgresql://.`);
    return { dialect: 'sqlite', path: defaultPath, url };
  };
}
