import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitForValue } from './waiting.ts';

// A real n8n for the n8n node's test: installed from the npm registry by scripts/n8n.sh into a
// cache outside the repository, given the node package the way a user installs one (npm pack, then
// npm install of the tarball into the n8n user folder's nodes/), and driven over n8n's own REST
// API as its editor drives it: an owner, credentials, a workflow, its activation and deactivation.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PACKAGE_DIR = path.join(ROOT, 'integrations/n8n-nodes-wa-gateway');
/** n8n's first start migrates its SQLite database, which takes minutes on a busy machine. */
const BOOT_WAIT_MS = 600_000;
const OWNER = { email: 'owner@example.com', firstName: 'Test', lastName: 'Owner', password: 'Owner-pass-1234' };
/** n8n ties its session cookie to the browser that logged in; every call says it is that one. */
const BROWSER_ID = 'wagw-n8n-test';

/** Where scripts/n8n.sh keeps n8n, installing it the first time. */
export function n8nHome(): string {
  return execFileSync('bash', [path.join(ROOT, 'scripts/n8n.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/**
 * Builds the node package (tsc against the n8n-workflow that n8n ships, its peer dependency) and
 * packs it as `npm publish` would; answers the tarball's path.
 */
export function packNodePackage(home: string, into: string): string {
  const linked = path.join(PACKAGE_DIR, 'node_modules/n8n-workflow');
  fs.mkdirSync(path.dirname(linked), { recursive: true });
  fs.rmSync(linked, { force: true, recursive: true });
  fs.symlinkSync(path.join(home, 'node_modules/n8n-workflow'), linked);
  fs.rmSync(path.join(PACKAGE_DIR, 'dist'), { recursive: true, force: true });
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: PACKAGE_DIR,
    stdio: 'inherit',
  });
  execFileSync(process.execPath, ['copy-icons.mjs'], { cwd: PACKAGE_DIR, stdio: 'inherit' });
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', into], {
    cwd: PACKAGE_DIR,
    encoding: 'utf8',
  });
  return path.join(into, packed.trim().split('\n').at(-1)!);
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export class N8n {
  private cookie = '';

  private constructor(
    readonly url: string,
    readonly port: number,
    private readonly child: ChildProcess,
    readonly folder: string,
    readonly logFile: string,
  ) {}

  /** A fresh n8n (SQLite, its own folder and port) with the packed node installed, started and set up with an owner. */
  static async start(home: string, tarball: string): Promise<N8n> {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-n8n-'));
    const nodes = path.join(folder, '.n8n/nodes');
    fs.mkdirSync(nodes, { recursive: true });
    fs.writeFileSync(path.join(nodes, 'package.json'), JSON.stringify({ name: 'installed-nodes', private: true }));
    // As n8n installs a community package: into its nodes folder, without n8n-workflow (its peer, n8n's own).
    execFileSync(
      'npm',
      ['install', '--omit=peer', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--prefer-offline', tarball],
      {
        cwd: nodes,
        stdio: 'inherit',
      },
    );
    const port = await freePort();
    // n8n's task broker listens on a fixed port (5679) unless told otherwise: another n8n on the machine would take it.
    const brokerPort = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const logFile = path.join(folder, 'n8n.log');
    const log = fs.openSync(logFile, 'a');
    const child = spawn(process.execPath, [path.join(home, 'node_modules/n8n/bin/n8n'), 'start'], {
      env: {
        PATH: process.env.PATH,
        HOME: folder,
        N8N_USER_FOLDER: folder,
        N8N_PORT: String(port),
        N8N_LISTEN_ADDRESS: '127.0.0.1',
        N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
        N8N_RUNNERS_BROKER_PORT: String(brokerPort),
        N8N_HOST: '127.0.0.1',
        N8N_WEBHOOK_URL: `${url}/`,
        N8N_ENCRYPTION_KEY: 'wagw-n8n-test-encryption-key',
        N8N_SECURE_COOKIE: 'false',
        N8N_DIAGNOSTICS_ENABLED: 'false',
        N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
        N8N_TEMPLATES_ENABLED: 'false',
        N8N_PERSONALIZATION_ENABLED: 'false',
        N8N_LOG_LEVEL: 'info',
        DB_TYPE: 'sqlite',
      },
      stdio: ['ignore', log, log],
    });
    const n8n = new N8n(url, port, child, folder, logFile);
    await waitForValue(
      async () => {
        if (child.exitCode !== null) throw new Error(`n8n exited with ${child.exitCode}:\n${n8n.logTail()}`);
        const answer = await fetch(`${url}/healthz/readiness`).catch(() => undefined);
        return answer?.status === 200 ? true : undefined;
      },
      'n8n to be ready',
      500,
      BOOT_WAIT_MS,
    );
    await n8n.setUpOwner();
    return n8n;
  }

  logTail(): string {
    return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-60).join('\n');
  }

  private async setUpOwner(): Promise<void> {
    const answer = await fetch(`${this.url}/rest/owner/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'browser-id': BROWSER_ID },
      body: JSON.stringify(OWNER),
    });
    if (answer.status !== 200) throw new Error(`owner setup answered ${answer.status}: ${await answer.text()}`);
    this.cookie = (answer.headers.getSetCookie().find((cookie) => cookie.startsWith('n8n-auth=')) ?? '').split(';')[0]!;
  }

  /** A call of n8n's REST API as its owner; answers `data`. */
  async rest<T>(method: string, route: string, body?: unknown): Promise<T> {
    const answer = await fetch(`${this.url}/rest${route}`, {
      method,
      headers: { 'content-type': 'application/json', 'browser-id': BROWSER_ID, cookie: this.cookie },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await answer.text();
    if (answer.status >= 300) throw new Error(`n8n ${method} ${route} answered ${answer.status}: ${text}\n${this.logTail()}`);
    return (JSON.parse(text) as { data: T }).data;
  }

  async stop(): Promise<void> {
    // Kept for a look when WAGW_TEST_KEEP_N8N_LOG names a file.
    if (process.env.WAGW_TEST_KEEP_N8N_LOG !== undefined) fs.copyFileSync(this.logFile, process.env.WAGW_TEST_KEEP_N8N_LOG);
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.folder, { recursive: true, force: true });
  }
}
