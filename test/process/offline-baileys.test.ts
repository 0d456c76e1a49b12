import { operatorScope } from '../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { createDatabaseAuthState } from '../../src/engines/baileys/auth-state-store.ts';
import { createGateway, createLogger } from '../../src/main.ts';
import { SecretBox } from '../../src/secrets/secret-box.ts';
import { createTestDatabase, dialects } from '../support/databases.ts';
import { uniquePhone } from '../support/gateway.ts';
import { waitFor } from './raw-http.ts';
import { killAllServerProcesses, startServerProcess } from './server-process.ts';

const SECRET_KEY = '0ff1'.repeat(16);

/** A baileys number whose stored creds say it was linked, so the server reconnects it at boot. */
async function seedLinkedBaileysNumber(databaseUrl: string): Promise<{ phone: string; apiKey: string }> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: SECRET_KEY });
  const gateway = await createGateway(config, createLogger(config));
  try {
    const account = await gateway.accounts.createAccount({ name: 'Offline', plan: 'pro' });
    const number = await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: uniquePhone(), engine: 'baileys' });
    // Written as `wagw number link` does: under a lease on this one number, given back afterwards.
    await gateway.keeper.startPinned([number.id]);
    const auth = await createDatabaseAuthState(
      gateway.store,
      new SecretBox(Buffer.from(SECRET_KEY, 'hex')),
      gateway.keeper.leaseOf(number.id)!,
      gateway.logger,
    );
    auth.state.creds.me = { id: `${number.phone.slice(1)}:1@s.whatsapp.net` };
    auth.state.creds.registered = true;
    await auth.saveCreds();
    const key = await gateway.apiKeys.createKey({ accountId: account.id });
    return { phone: number.phone, apiKey: key.plaintext };
  } finally {
    await gateway.keeper.stop();
    await gateway.close();
  }
}

for (const dialect of dialects) {
  describe(`a linked WhatsApp number on a machine that cannot reach WhatsApp (${dialect})`, () => {
    after(() => killAllServerProcesses());

    it('goes disconnected with the reason, backs off with one log line per step, and the API answers 503', async () => {
      const database = await createTestDatabase(dialect);
      try {
        const { phone, apiKey } = await seedLinkedBaileysNumber(database.url);
        const server = await startServerProcess(database.url, { WAGW_SECRET_KEY: SECRET_KEY });
        const base = `http://127.0.0.1:${server.port}`;
        const lines = () =>
          server
            .output()
            .split('\n')
            .filter((line) => line.includes('"engine":"baileys"'));
        await waitFor(() => lines().length >= 2, 30_000, 'two reconnect attempts to be logged');

        const reconnects = lines().map((line) => JSON.parse(line) as { level: number; retryInMs?: number; msg: string });
        assert.ok(
          reconnects.every((line) => typeof line.retryInMs === 'number'),
          `only one line per backoff step:\n${lines().join('\n')}`,
        );
        assert.match(reconnects[0]!.msg, /the connection closed/);
        assert.ok(reconnects[1]!.retryInMs! > reconnects[0]!.retryInMs! * 1.2, 'the delay grows');

        const send = await fetch(`${base}/send_message`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ from_phone: phone, to_phone: '+14155550100', message: 'offline?' }),
        });
        assert.equal(send.status, 503);
        const body = (await send.json()) as { error: string; meta?: { status?: string } };
        assert.equal(body.error, 'number_not_connected');
        assert.equal(body.meta?.status, 'disconnected');
        assert.equal((await fetch(`${base}/health`)).status, 200, 'the server stays healthy');
      } finally {
        await killAllServerProcesses();
        await database.drop();
      }
    });
  });
}
