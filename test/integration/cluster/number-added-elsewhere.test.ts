import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { until } from '../../support/leases.ts';

/** A lease TTL whose renewal tick (a third of it) cannot come during the test. */
const LONG_TTL_MS = 90_000;

// A number added by another process (the CLI, or another node) is claimed by a running node as
// soon as it is told, not at the node's next lease tick: until then nothing serves the number,
// and messages to it go unheard. Nodes are told over PostgreSQL's notifications; a SQLite
// gateway takes it up at its next tick (README).
for (const dialect of dialects.filter((candidate) => candidate === 'postgres')) {
  describe(`a number added by another process is claimed at once by a running node (${dialect})`, () => {
    let node: TestGateway;
    let cli: Gateway;

    before(async () => {
      node = await startTestGateway(dialect, { WAGW_LEASE_TTL_MS: String(LONG_TTL_MS) });
      // The whole runtime, as `wagw serve` starts it: the node listens for the cluster's signals.
      await node.gateway.runtime.start();
      const config = loadConfig({ DATABASE_URL: node.database.url, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: '7e57'.repeat(16) });
      // What the CLI builds: the same services, with no sessions or leases of its own.
      cli = await createGateway(config, createLogger(config));
    });

    after(async () => {
      await cli?.close();
      await node?.gateway.runtime.stop();
      await node?.close();
    });

    it('within moments of `number add`, far inside the node’s lease tick', async () => {
      const account = await seedAccount(node.gateway, { numbers: 0 });
      const startedAt = Date.now();
      const added = await cli.numbers.addNumber(operatorScope(), { accountId: account.accountId, phone: uniquePhone() });
      // Served: the node holds the number's lease and runs its session.
      await until(
        () => node.gateway.supervisor.servedNumbers().some((number) => number.phone === added.phone),
        'the running node to claim and serve the new number',
      );
      assert.ok(node.gateway.keeper.leaseOf(added.id) !== undefined);
      assert.ok(Date.now() - startedAt < LONG_TTL_MS / 3, 'claimed on being told, not at a tick');
    });
  });
}
