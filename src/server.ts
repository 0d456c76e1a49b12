import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import { boundConnectionsPerAddress } from './http/connection-bounds.ts';
import type { Gateway } from './main.ts';
import { buildApp } from './app.ts';
import { handledElsewhere } from './domain/promises.ts';

/** How often shutdown closes connections that have gone idle since the last sweep. */
const IDLE_SWEEP_MS = 100;

/** The most of the grace period kept for the last flush and closing the database. */
const FLUSH_RESERVE_MS = 2_000;

export interface RunningServer {
  app: FastifyInstance;
  address: string;
  stop(): Promise<void>;
}

/**
 * Listens and owns the process's shutdown. No timer cuts a body short: slow automated senders
 * may trickle one for as long as they need (docs/adr/0003). What bounds the cost of that is
 * WAGW_MAX_CONNECTIONS, enforced by the server socket itself, and the per-address bounds, so
 * that one client cannot take every slot; headers alone have a deadline.
 */
export async function startServer(gateway: Gateway): Promise<RunningServer> {
  const app = await buildApp(gateway);
  const server = app.server;
  server.requestTimeout = 0;
  // Headers are not bodies: an automated sender's slow upload needs no header deadline, and a
  // client that never finishes its headers only holds a slot (docs/adr/0003). Node checks this
  // deadline on the connections sweep that app.ts sets to a fraction of it.
  server.headersTimeout = gateway.config.http.headersTimeoutMs;
  server.timeout = 0;
  server.maxConnections = gateway.config.http.maxConnections;
  boundConnectionsPerAddress(
    server,
    { perAddress: gateway.config.http.maxConnectionsPerAddress, perIpv6Site: gateway.config.http.maxConnectionsPerIpv6Site },
    gateway.logger,
  );

  // Once shutdown starts, every answer closes its connection. Fastify only does this for
  // requests that arrive after closing began, so an answer to a request already in flight
  // would otherwise keep a pooled client's connection alive and hold the shutdown open.
  let stopRequested = false;
  app.addHook('onSend', async (_request, reply) => {
    if (stopRequested) void reply.header('Connection', 'close');
  });

  const closeUnusedConnections = trackRequestsPerConnection(server, gateway.config.http.unusedConnectionGraceMs);

  warnAboutUnsafeSettings(gateway);
  // The node's background work (leases and sessions, deliveries, sweeps) is the runtime's; it
  // starts first so that a number this node serves is connected by the time requests come.
  await gateway.runtime.start();
  let address: string;
  try {
    address = await app.listen({ host: gateway.config.http.host, port: gateway.config.http.port });
  } catch (error) {
    await gateway.runtime.stop();
    await gateway.close();
    throw error;
  }
  if (gateway.config.cluster.nodeUrl === null) await gateway.keeper.announceUrl(reachableUrl(address));
  let stopping: Promise<void> | undefined;
  const stop = () => {
    // Order matters (docs/operations.md#stopping). What other nodes wait for comes first: the
    // sessions stop and their leases are released, so the numbers move at once; then the
    // webhook worker. Only then does HTTP drain, within the grace period, so that a slow body
    // cannot hold back the work above or the last flush: past its deadline the remaining
    // sockets are destroyed. Then the commits all of them queued are flushed and the database
    // closed. Deliveries not yet attempted stay in the outbox for the next start.
    stopping ??= (async () => {
      const drainDeadline = Date.now() + httpDrainMs(gateway.config.http.shutdownGraceMs);
      stopRequested = true;
      // The node keeps listening while its numbers are handed over: a load balancer that has not
      // yet seen the node leave (its /health answers 503 `stopping` from now on) may still send a
      // request, and a request answered (forwarded to the number's new owner, or 503 with
      // Retry-After) is better than a refused or reset connection. Closing the listener drops the
      // connections the kernel accepted but the process had not; the later that is, the longer
      // after the balancer stopped sending it comes.
      let closed: Promise<unknown> | undefined;
      const closeIdle = setInterval(closeUnusedConnections, IDLE_SWEEP_MS);
      try {
        await gateway.runtime.stop();
        await afterOnePoll();
        closed = app.close();
        await drainHttp(closed, server, drainDeadline, gateway.logger);
      } finally {
        clearInterval(closeIdle);
        // Should stopping the runtime throw, the listener still closes, and its failure is the one reported.
        if (closed === undefined) app.close().catch(handledElsewhere);
      }
      await gateway.close();
    })();
    return stopping;
  };
  return { app, address, stop };
}

/**
 * Returns what closes every connection with no request in flight. Node's own
 * closeIdleConnections() closes only those that finished a request: a connection that was
 * opened and never sent one (a pool that connected for a call then abandoned, as a node
 * forwarding to a frozen owner leaves behind) would otherwise hold the drain open until the
 * end of the grace period.
 */
function trackRequestsPerConnection(server: FastifyInstance['server'], unusedGraceMs: number): () => void {
  const connections = new Map<Socket, { inFlight: number; used: boolean; openedAt: number }>();
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { inFlight: 0, used: false, openedAt: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (request, response) => {
    const connection = connections.get(request.socket as Socket);
    if (connection === undefined) return;
    connection.inFlight += 1;
    connection.used = true;
    response.once('close', () => {
      connection.inFlight -= 1;
    });
  });
  return () => {
    const now = Date.now();
    for (const [socket, { inFlight, used, openedAt }] of connections) {
      // A connection answered before is idle between requests. One never used may have its first
      // on the way: the kernel accepts a connection before its client writes a byte, and a client
      // on a busy host may be scheduled late; closing it now would reset that request (ECONNRESET,
      // a failed request on the planned path). Still silent after the grace, it was abandoned (a
      // pool that connected and never used it), and no longer holds the drain open.
      if (inFlight <= 0 && (used || now - openedAt >= unusedGraceMs)) socket.destroy();
    }
  };
}

/**
 * Resolves once the event loop has polled again. A connection the kernel completed while this
 * process was busy (or descheduled on a loaded host) waits in the listener's backlog until a poll
 * accepts it; closing the listener first resets it, a failed request from a client that connected
 * before the node stopped listening. The first immediate runs after the current poll, the second
 * after the next one, which accepts what the kernel holds; from then on it is served like any other.
 */
function afterOnePoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * The share of the grace period that requests in flight get: the rest is kept for the last
 * flush and closing the database, which must not be cut short by the process exiting.
 */
function httpDrainMs(graceMs: number): number {
  return Math.max(0, graceMs - Math.min(FLUSH_RESERVE_MS, graceMs / 4));
}

/** Waits for the requests in flight until the deadline, then destroys the sockets still open. */
async function drainHttp(
  closed: PromiseLike<unknown>,
  server: FastifyInstance['server'],
  deadline: number,
  logger: Gateway['logger'],
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()));
  });
  try {
    if ((await Promise.race([closed, expired])) !== 'expired') return;
  } finally {
    clearTimeout(timer);
  }
  logger.warn('requests were still in flight at the end of the shutdown grace period; their connections are closed');
  server.closeAllConnections();
  await closed;
}

/** The listening address as a URL another process on this host can call: a wildcard becomes loopback. */
function reachableUrl(address: string): string {
  const url = new URL(address);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}

/** Settings that weaken a guard are said out loud at every start, so that none is left on by mistake. */
function warnAboutUnsafeSettings(gateway: Gateway): void {
  if (gateway.config.webhooks.allowPrivateAddresses) {
    gateway.logger.warn(
      "WAGW_WEBHOOK_ALLOW_PRIVATE=true lets every tenant's webhooks reach every private and loopback address of this network, and shows " +
        'their answers in the delivery log; list the receivers you need in WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS instead',
    );
  }
}

/** On SIGTERM or SIGINT: stop taking requests, hand the numbers over, drain the in-flight requests, flush, exit. */
export function stopOnSignals(server: RunningServer, gateway: Gateway): void {
  closeWithGrace({ delay: gateway.config.http.shutdownGraceMs }, async ({ signal, err }) => {
    if (err) gateway.logger.error({ err }, 'stopping after an unexpected error');
    else gateway.logger.info({ signal }, 'stopping');
    await server.stop();
  });
}
