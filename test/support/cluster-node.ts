import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createGateway, createLogger, type Gateway } from '../../src/main.ts';
import type { TestDatabase } from './databases.ts';
import { operatorScope } from '../../src/domain/tenant-scope.ts';
import { sleep, waitForValue } from './waiting.ts';

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

/** The one node holding the number's lease, once exactly one does. */
export async function numberOwner(nodes: ClusterNode[], phone: string): Promise<ClusterNode> {
  const numberId = (await nodes[0]!.gateway.numbers.findNumber(operatorScope(), phone)).id;
  return waitForValue(async () => {
    await Promise.all(nodes.map((node) => node.gateway.keeper.tickSoon()));
    const holders = nodes.filter((node) => node.gateway.keeper.leaseOf(numberId) !== undefined);
    return holders.length === 1 ? holders[0] : undefined;
  }, 'the number held by one node');
}

/**
 * Makes a call until it is not refused for now: a 503 (the number still connecting on a node that
 * just took it) waits its Retry-After and calls again. Answers the first other answer.
 */
export async function callUntilAvailable(call: () => Promise<Response>, what: string): Promise<Response> {
  return waitForValue(async () => {
    const response = await call();
    if (response.status !== 503) return response;
    await sleep(Number(response.headers.get('retry-after')) * 1000);
    return undefined;
  }, what);
}
