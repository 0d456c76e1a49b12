import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitUntil } from './waiting.ts';

const run = promisify(execFile);

/**
 * Debian's rabbitmq-server, started as the current user: the /usr/sbin wrapper would switch to
 * the rabbitmq user, whose home the throwaway node must not touch.
 */
function brokerScripts(): string {
  const base = '/usr/lib/rabbitmq/lib';
  const release = existsSync(base)
    ? readdirSync(base)
        .filter((name) => name.startsWith('rabbitmq_server-'))
        .sort()
        .at(-1)
    : undefined;
  if (release === undefined) throw new Error("The RabbitMQ tests need Debian's rabbitmq-server (apt-get install rabbitmq-server).");
  return join(base, release, 'sbin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * Whether an AMQP broker answers on the port: the client's protocol header gets a method frame
 * (type 1, Connection.Start) back. A bare connect is not enough: between choosing a free port and
 * the broker's bind (seconds), another test's server may take the port, and a test would then
 * speak AMQP to an HTTP server (seen in CI as a 1.3 GB "frame", the bytes of `HTTP/1.`).
 */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('connect', () => socket.write(Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1])));
    socket.once('data', (chunk: Buffer) => done(chunk[0] === 1));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
    socket.setTimeout(5_000, () => done(false));
  });
}

/** How many times a broker is started on new ports before its start fails the test. */
const START_ATTEMPTS = 3;

/**
 * A throwaway RabbitMQ node for one test file, as scripts/postgres.sh makes a throwaway
 * PostgreSQL: its own node name, ports, data directory and Erlang cookie (HOME), listening on
 * 127.0.0.1 only, deleted afterwards. `restart` stops and starts the broker application (its
 * connections drop, its durable queues come back from disk) without the Erlang VM's slow start.
 */
export class ThrowawayRabbitmq {
  private constructor(
    private readonly process: ChildProcess,
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly node: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  /**
   * A free port is only free when it is asked for: the broker binds it seconds later, while other
   * test files run beside this one, and may find it taken (its boot then ends with eaddrinuse, as
   * a loaded CI run saw). A broker that exits before it listens is started again on new ports.
   */
  static async start(): Promise<ThrowawayRabbitmq> {
    for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      const broker = await ThrowawayRabbitmq.startOnce(attempt === START_ATTEMPTS);
      if (broker !== undefined) return broker;
    }
    throw new Error('unreachable: the last attempt keeps its logs and throws');
  }

  /** One broker on new ports; undefined if it exited before listening (its files removed), unless it was the last try. */
  private static async startOnce(lastTry: boolean): Promise<ThrowawayRabbitmq | undefined> {
    const scripts = brokerScripts();
    const dir = await mkdtemp(join(tmpdir(), 'wagw-test-rabbitmq-'));
    const port = await freePort();
    const node = `wagw${port}@localhost`;
    const env = {
      ...process.env,
      HOME: dir,
      RABBITMQ_NODENAME: node,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(await freePort()),
      RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(dir, 'log'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
      RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, 'plugins-expand'),
      RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
      RABBITMQ_PID_FILE: join(dir, 'pid'),
      RABBITMQ_ENABLED_PLUGINS: '',
    };
    const child = spawn(join(scripts, 'rabbitmq-server'), [], { env, stdio: 'ignore' });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    await waitUntil(async () => exited || (await accepts(port)), `RabbitMQ to listen on ${port}`, 200);
    if (!exited) return new ThrowawayRabbitmq(child, dir, env, node, port);
    if (lastTry)
      throw new Error(`RabbitMQ exited before listening on ${port}, ${START_ATTEMPTS} times; its logs are in ${join(dir, 'log')}`);
    await rm(dir, { recursive: true, force: true });
    return undefined;
  }

  private ctl(...args: string[]): Promise<unknown> {
    return run(join(brokerScripts(), 'rabbitmqctl'), ['-n', this.node, ...args], { env: this.env });
  }

  /** Stops the broker application and starts it again, dropping every connection. */
  async restart(): Promise<void> {
    await this.ctl('stop_app');
    await this.ctl('start_app');
    await waitUntil(() => accepts(this.port), `RabbitMQ to listen on ${this.port} again`, 100);
  }

  async stopApp(): Promise<void> {
    await this.ctl('stop_app');
  }

  async startApp(): Promise<void> {
    await this.ctl('start_app');
    await waitUntil(() => accepts(this.port), `RabbitMQ to listen on ${this.port} again`, 100);
  }

  async close(): Promise<void> {
    await this.ctl('stop').catch(() => this.process.kill('SIGKILL'));
    await rm(this.dir, { recursive: true, force: true });
  }
}
