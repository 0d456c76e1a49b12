import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { startServer } from '../../../src/http/server.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { createMigratedTestDatabase, dialects } from '../../support/databases.ts';
import { collectingSink, seedAccount } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

/** What the node's own start writes, warm start or not: its record, its leases and their history. */
const NODE_BOOKKEEPING = new Set(['cluster_nodes', 'number_leases', 'lease_changes']);

async function rowCounts(gateway: Gateway): Promise<Record<string, number>> {
  const { db, dialect } = gateway.store;
  const tables =
    dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows) {
    if (NODE_BOOKKEEPING.has(name)) continue;
    const { rows } = await sql<{ count: number | string }>`select count(*) as count from ${sql.table(name)}`.execute(db);
    counts[name] = Number(rows[0]!.count);
  }
  return counts;
}

for (const dialect of dialects) {
  describe(`warm start (${dialect})`, () => {
    test('a server rehearses the hot paths before it listens, and leaves no row, event, delivery or quota use behind', async () => {
      const database = await createMigratedTestDatabase(dialect);
      const receiver = await WebhookReceiver.start();
      const lines: string[] = [];
      const config = loadConfig({
        DATABASE_URL: database.url,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        WAGW_SECRET_KEY: '7e57'.repeat(16),
        WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${receiver.port}`,
        // Long enough that the rehearsal ends on its message count, not its deadline.
        WAGW_WARM_START_MS: '30000',
      });
      const gateway = await createGateway(config, createLogger(config, collectingSink(lines)));
      const sender = await seedAccount(gateway);
      await gateway.webhooks.createWebhook(accountScope(sender.accountId), { url: receiver.url(), eventTypes: ['message'] });
      const before = await rowCounts(gateway);

      const server = await startServer(gateway);
      try {
        const rehearsal = lines
          .map((line) => JSON.parse(line) as { msg: string; messages?: number; deliveries?: number })
          .find((line) => line.msg.startsWith('warm start:'));
        assert.ok(rehearsal !== undefined, `no rehearsal was logged:\n${lines.join('')}`);
        // Half of the rehearsal's messages are incoming, and each of those was delivered to its scratch webhook.
        assert.ok(rehearsal.messages! >= 1_000, JSON.stringify(rehearsal));
        assert.equal(rehearsal.deliveries, rehearsal.messages! / 2);

        assert.deepEqual(await rowCounts(gateway), before);
        assert.equal(receiver.requests.length, 0, 'the rehearsal reached a webhook of the operator');

        // The node serves at once, on its own database and webhook.
        const answer = await fetch(`${server.address}/sandbox/receive`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sender.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ from_phone: '+14155550100', to_phone: sender.phones[0], message: 'after the warm start' }),
        });
        assert.equal(answer.status, 200, await answer.text());
        await receiver.waitForRequests(1);
        assert.match(receiver.requests[0]!.body, /after the warm start/);
      } finally {
        await server.stop();
        await receiver.close();
        await database.drop();
      }
    });
  });
}
