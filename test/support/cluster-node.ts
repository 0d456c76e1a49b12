import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createGateway, createLogger, type Gateway } from '../../src/main.ts';
import type { TestDatabase } from './databases.ts';

export interface ClusterNode {
  gateway: Gateway;
  server: RunningServer;
  url: string;
}

/** A node as `wagw serve` runs one, listening on a loopback port, on the shared database, its logs dropped. */
export async function startClusterNode(database: TestDatabase, name: string, env: Record<string, string> = {}): Promise<ClusterNode> {
  const config = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: 'warn',
    WAGW_SECRET_KEY: '7e57'.repeat(16),
    WAGW_NODE_NAME: name,
    ...env,
  });
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const gateway = await createGateway(config, createLogger(config, quiet));
  const server = await startServer(gateway);
  return { gateway, server, url: server.address };
}
