import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createGateway, createLogger, type Gateway } from '../../src/main.ts';
import { createMigratedTestDatabase, type Dialect } from '../support/databases.ts';
import { seedAccount, type SeededAccount } from '../support/gateway.ts';
import { withTimeout } from './raw-http.ts';

export interface ListeningGateway {
  gateway: Gateway;
  server: RunningServer;
  port: number;
  sender: SeededAccount;
  /** How many connections the server socket holds right now. */
  openConnections(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The production server (startServer: its timeouts, its connection bound) listening on a real
 * socket on a free port, in this process, on a fresh database with one seeded account.
 */
export async function startListeningGateway(dialect: Dialect, env: Record<string, string> = {}): Promise<ListeningGateway> {
  const database = await createMigratedTestDatabase(dialect);
  const config = loadConfig({ DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env });
  const gateway = await createGateway(config, createLogger(config));
  const sender = await seedAccount(gateway);
  const server = await startServer(gateway);
  const port = (server.app.server.address() as AddressInfo).port;
  return {
    gateway,
    server,
    port,
    sender,
    openConnections: () =>
      new Promise((resolve, reject) => server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count)))),
    async close() {
      // Cleanup only: connections a failed test left open must not hold the server's close.
      server.app.server.closeAllConnections();
      await withTimeout(server.stop(), 10_000, 'the in-process server to stop');
      await database.drop();
    },
  };
}
