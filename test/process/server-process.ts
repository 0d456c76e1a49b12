import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.ts';
import { createGateway, createLogger, type Gateway } from '../../src/main.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { seedAccount, type SeededAccount } from '../support/gateway.ts';
import { request, waitFor, withTimeout } from './raw-http.ts';
import { ignoreCleanupFailure } from '../support/ignore.ts';

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Generous: CI runs two test files at once on two cores, and a start there has been seen to
// take far longer than the second or two it takes on an idle machine.
const STARTUP_TIMEOUT_MS = 60_000;

interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** `wagw serve` running as a child process, exactly as an operator starts it. */
export interface ServerProcess {
  pid: number;
  port: number;
  exited: Promise<ExitStatus>;
  /** Undefined while the process runs. */
  exitStatus(): ExitStatus | undefined;
  /** Sends a signal to the server's whole process group. */
  signalGroup(signal: NodeJS.Signals): void;
  /** stdout and stderr so far, for assertion messages. */
  output(): string;
}

const running = new Set<ServerProcess>();

/** A port that was free a moment ago; the server binds it itself, as in production. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node bin/wagw serve` on the database in its own process group, and resolves once
 * GET /health answers 200. The environment is built from scratch so that nothing of the test
 * runner's (NODE_OPTIONS, NODE_TEST_CONTEXT, WAGW_* of the developer) leaks into the server.
 */
export async function startServerProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  cwd = REPOSITORY_ROOT,
): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const server = spawnServer(databaseUrl, await freePort(), env, cwd);
    try {
      await waitUntilHealthy(server, databaseUrl);
      return server;
    } catch (error) {
      killGroup(server, 'SIGKILL');
      await withTimeout(server.exited, 5_000, 'a server that failed to start to exit').catch(ignoreCleanupFailure);
      // Another test file may take the probed port between probing and binding; try another.
      if (attempt < 3 && server.output().includes('EADDRINUSE')) continue;
      throw error;
    }
  }
}

function spawnServer(databaseUrl: string, port: number, env: Record<string, string>, cwd: string): ServerProcess {
  const child: ChildProcess = spawn(process.execPath, [path.join(REPOSITORY_ROOT, 'bin/wagw'), 'serve'], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ...(process.env.TMPDIR !== undefined && { TMPDIR: process.env.TMPDIR }),
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let status: ExitStatus | undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      status = { code, signal };
      resolve(status);
    });
  });
  if (child.pid === undefined) throw new Error('The server process could not be spawned');
  const server: ServerProcess = {
    pid: child.pid,
    port,
    exited,
    exitStatus: () => status,
    signalGroup: (signal) => killGroup(server, signal),
    output: () => output,
  };
  running.add(server);
  void exited.then(() => running.delete(server));
  return server;
}

async function waitUntilHealthy(server: ServerProcess, databaseUrl: string): Promise<void> {
  let lastProbe = 'no probe answered yet';
  // A server that exited will not start later: that ends the wait at once, not at its time-out.
  const outcome = await waitFor(
    async () => {
      if (server.exitStatus() !== undefined) return 'exited' as const;
      const response = await request(server.port, { method: 'GET', path: '/health', timeoutMs: 2_000 }).catch((error: Error) => {
        lastProbe = `the last probe failed: ${error.message}`;
        return undefined;
      });
      if (response !== undefined) lastProbe = `the last probe got ${response.statusCode} ${response.body}`;
      return response?.statusCode === 200 && ('listening' as const);
    },
    STARTUP_TIMEOUT_MS,
    'wagw serve to answer GET /health with 200',
    100,
  ).catch(async (error: Error) => {
    // A start that hangs is a product bug worth a precise report: what the server answered, and
    // on PostgreSQL what its connections were doing at that moment.
    const activity = await databaseActivity(databaseUrl);
    throw new Error(`${error.message}; ${lastProbe}\n--- database activity ---\n${activity}\n--- server output ---\n${server.output()}`);
  });
  if (outcome === 'exited')
    throw new Error(`wagw serve exited (${JSON.stringify(server.exitStatus())}) before listening:\n${server.output()}`);
}

async function databaseActivity(databaseUrl: string): Promise<string> {
  if (!databaseUrl.startsWith('postgres')) return '(SQLite: none to show)';
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const { rows } = await client.query(
      `select pid, state, wait_event_type, wait_event, pg_blocking_pids(pid) as blocked_by,
              round(extract(epoch from now() - coalesce(xact_start, query_start))::numeric, 1) as seconds, left(query, 160) as query
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    );
    return rows.length === 0 ? '(no other connections)' : rows.map((row) => JSON.stringify(row)).join('\n');
  } catch (error) {
    return `(could not read pg_stat_activity: ${(error as Error).message})`;
  } finally {
    await client.end().catch(ignoreCleanupFailure);
  }
}

function killGroup(server: ServerProcess, signal: NodeJS.Signals): void {
  try {
    // A negative pid addresses the process group that `detached: true` gave the server.
    process.kill(-server.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** SIGKILLs every server still running; for `after`, so a failed test leaves no process behind. */
export async function killAllServerProcesses(): Promise<void> {
  const servers = [...running];
  for (const server of servers) killGroup(server, 'SIGKILL');
  await Promise.all(servers.map((server) => withTimeout(server.exited, 5_000, `server ${server.pid} to exit`)));
}

// Belt and braces: if the test process itself dies, its servers die with it.
process.once('exit', () => {
  for (const server of running) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/**
 * Runs `work` on a gateway in this process on the database (migrated first), through the real
 * services, and closes the gateway again; its server and workers never start.
 */
export async function withGateway<T>(
  databaseUrl: string,
  work: (gateway: Gateway) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env });
  const gateway = await createGateway(config, createLogger(config));
  try {
    return await work(gateway);
  } finally {
    await gateway.close();
  }
}

/** Migrates the database and seeds an account, before any server process starts. */
export function seedDatabase(databaseUrl: string): Promise<SeededAccount> {
  return withGateway(databaseUrl, (gateway) => seedAccount(gateway));
}

/** A plain connection to the database, to read what the server stored. */
export function openDatabase(databaseUrl: string): Store {
  return openStore(loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }).database);
}
