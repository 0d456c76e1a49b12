import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { boundConnectionsPerAddress } from './connection-bounds.ts';
import type { Gateway } from '../main.ts';
import { buildApp } from './app.ts';

/**
 * A send still `queued` this long after its row was written was cut off by a crash: no engine
 * takes this long to answer. The age keeps the sweep away from sends that another gateway on
 * the same database is still making; it runs at start and then once per period.
 */
const INTERRUPTED_SEND_AGE_MS = 60_000;

/** How often shutdown closes connections that have gone idle since the last sweep. */
const IDLE_SWEEP_MS = 100;

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

  warnAboutUnsafeSettings(gateway);
  await gateway.supervisor.startAll();
  const address = await app.listen({ host: gateway.config.http.host, port: gateway.config.http.port });
  gateway.deliveryWorker.start();
  const sweepInterruptedSends = async () => {
    const olderThan = new Date(Date.now() - INTERRUPTED_SEND_AGE_MS);
    const interrupted = await gateway.sender.failInterruptedSends(olderThan).catch((error: unknown) => {
      gateway.logger.error({ err: error }, 'could not sweep interrupted sends');
      return 0;
    });
    if (interrupted > 0) gateway.logger.warn({ count: interrupted }, 'failed sends that a crash cut off before the engine answered');
    // Idempotency keys past their 24 hours go in the same sweep; until then they are only ignored.
    await gateway.idempotentSender.purgeExpired().catch((error: unknown) => {
      gateway.logger.error({ err: error }, 'could not purge expired idempotency keys');
    });
    // So do sign-in counters whose windows have passed: without this the table only grows.
    await gateway.signIn.pruneThrottle().catch((error: unknown) => {
      gateway.logger.error({ err: error }, 'could not prune sign-in throttle counters');
    });
  };
  await sweepInterruptedSends();
  // The same minute also picks up numbers linked from the CLI while this server was running.
  const sweeper = setInterval(() => void sweepInterruptedSends().then(() => gateway.supervisor.resumeLinkedSessions()), INTERRUPTED_SEND_AGE_MS);
  sweeper.unref();

  let stopping: Promise<void> | undefined;
  const stop = () => {
    // Order matters: stop taking requests and let in-flight ones finish, then stop the
    // sessions, then (in gateway.close) let webhook attempts in flight finish, flush the
    // commits all of them queued, and close the database. Deliveries not yet attempted stay
    // in the outbox for the next start.
    stopping ??= (async () => {
      stopRequested = true;
      clearInterval(sweeper);
      const closeIdle = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      try {
        await app.close();
      } finally {
        clearInterval(closeIdle);
      }
      await gateway.linking.stopAll();
      await gateway.supervisor.stopAll();
      await gateway.close();
    })();
    return stopping;
  };
  return { app, address, stop };
}

/** Settings that weaken a guard are said out loud at every start, so that none is left on by mistake. */
function warnAboutUnsafeSettings(gateway: Gateway): void {
  if (gateway.config.webhooks.allowPrivateAddresses) {
    gateway.logger.warn(
      'WAGW_WEBHOOK_ALLOW_PRIVATE=true lets every tenant\'s webhooks reach every private and loopback address of this network, and shows their answers in the delivery log; list the receivers you need in WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS instead',
    );
  }
}

/** On SIGTERM or SIGINT: stop taking requests, finish the in-flight ones, flush, exit. */
export function stopOnSignals(server: RunningServer, gateway: Gateway): void {
  closeWithGrace({ delay: gateway.config.http.shutdownGraceMs }, async ({ signal, err }) => {
    if (err) gateway.logger.error({ err }, 'stopping after an unexpected error');
    else gateway.logger.info({ signal }, 'stopping');
    await server.stop();
  });
}
