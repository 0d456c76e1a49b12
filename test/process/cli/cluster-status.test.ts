import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { startListeningGateway, type ListeningGateway } from '../listening-gateway.ts';
import { expectJsonObject, runCli } from '../../support/run-cli.ts';
import type { JsonObject } from '../../support/json.ts';

for (const dialect of dialects) {
  describe(`wagw cluster status lists each live node's periodic tasks (${dialect})`, () => {
    let node: ListeningGateway;
    before(async () => {
      // A served node: its runtime ran the sweeps at start, and its address is recorded.
      // The key the CLI signs its call to the node with is derived from the same secret key.
      node = await startListeningGateway(dialect, { WAGW_SECRET_KEY: process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16) });
    });
    after(() => node.close());

    it('with their scope, interval, runs, failures and when each last ran, asked of the node that runs them', async () => {
      const status = expectJsonObject(
        await runCli(node.gateway.config.database.url, ['cluster', 'status', '--json'], {
          WAGW_SECRET_KEY: node.gateway.config.secretKey!.toString('hex'),
        }),
      );
      const listed = (status.nodes as Array<JsonObject>).find((entry) => entry.id === node.gateway.keeper.nodeId);
      assert.ok(listed, 'the serving node is listed');
      const tasks = listed.tasks as Array<JsonObject>;
      assert.deepEqual(
        tasks.map((task) => task.name).sort(),
        node.gateway.scheduler
          .list()
          .map((task) => task.name)
          .sort(),
      );
      const sweep = tasks.find((task) => task.name === 'expiry-sweep')!;
      assert.equal(sweep.scope, 'every-node');
      assert.equal(sweep.interval_ms, node.gateway.config.interruptedSendAfterMs);
      assert.equal(sweep.active, true);
      assert.ok(sweep.runs >= 1, 'it ran when the node started');
      assert.equal(sweep.failures, 0);
      assert.ok(Date.parse(sweep.last_run_at) <= Date.now());
      assert.equal(tasks.find((task) => task.name === 'media-download-retries')!.scope, 'owner');
    });
  });
}
