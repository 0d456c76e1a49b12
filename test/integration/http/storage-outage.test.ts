import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, dialects } from '../../support/databases.ts';
import { RECIPIENT_AWAY, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { startDatabaseProxy, type TcpProxy } from '../../support/tcp-proxy.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';

// An outage of the store is the gateway's to report honestly: a 503 the client may retry, with
// Retry-After, never a 500 that reads as a bug.
const TO = '+14155550123';

function assertStorageUnavailable(response: {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  json(): { error: string; meta?: { retry_after_seconds?: number } };
}): void {
  assert.deepEqual([response.statusCode, response.json().error], [503, 'storage_unavailable'], response.body);
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(retryAfter >= 1, `Retry-After says when: ${String(response.headers['retry-after'])}`);
  assert.equal(response.json().meta?.retry_after_seconds, retryAfter);
}

describe('a send while PostgreSQL cannot be reached (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let test: TestGateway | undefined;
  let proxy: TcpProxy | undefined;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  after(async () => {
    await proxy?.mend().catch(ignoreCleanupFailure);
    await test?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 storage_unavailable with Retry-After, and 200 again once the database is back', async () => {
    database = await createTestDatabase('postgres');
    const proxied = await startDatabaseProxy(database.url);
    proxy = proxied.proxy;
    test = await startTestGateway('postgres', { DATABASE_URL: proxied.url });
    const account = await seedAccount(test.gateway);
    const send = () =>
      test!.post('/send_message', { from_phone: account.phones[0], to_phone: TO, message: 'during the outage' }, account.apiKey);
    assert.equal((await send()).statusCode, 200);

    await proxy.cut();
    const refused = await send();
    assertStorageUnavailable(refused);
    assert.ok(
      test.logLines.some((line) => line.includes('the store is unavailable')),
      'the cause is logged',
    );

    await proxy.mend();
    const healed = await send();
    assert.equal(healed.statusCode, 200, healed.body);
  });
});

for (const dialect of dialects) {
  describe(`a simulated incoming message for a number without a live session (${dialect})`, () => {
    let test: TestGateway | undefined;
    after(() => test?.close());

    it('answers 503 number_not_connected, as a send does', async () => {
      // The refused message waits for the number on the network first: its own wait, not the tests' minute.
      test = await startTestGateway(dialect, {}, RECIPIENT_AWAY);
      const account = await seedAccount(test.gateway);
      const receive = () =>
        test!.post('/sandbox/receive', { from_phone: TO, to_phone: account.phones[0], message: 'hello' }, account.apiKey);
      assert.equal((await receive()).statusCode, 200);
      // The node stops its sessions and gives its leases up: nothing serves the number now.
      await test.gateway.keeper.stop();
      const refused = await receive();
      assert.deepEqual([refused.statusCode, refused.json().error], [503, 'number_not_connected'], refused.body);
      assert.equal(refused.json().meta.to_phone, account.phones[0]);
    });
  });
}

describe("a send when SQLite's database is full (sqlite)", () => {
  let test: TestGateway | undefined;
  after(() => test?.close());

  it('answers 503 storage_unavailable with Retry-After, never 500', async () => {
    test = await startTestGateway('sqlite');
    const account = await seedAccount(test.gateway);
    // The database may grow no further than it is now: the disk is full, as SQLite sees it.
    const pages = await sql<{ page_count: number }>`pragma page_count`.execute(test.gateway.store.db);
    await sql.raw(`pragma max_page_count = ${pages.rows[0]!.page_count}`).execute(test.gateway.store.db);
    const statuses = new Map<string, number>();
    let refused: Awaited<ReturnType<TestGateway['post']>> | undefined;
    for (let attempt = 0; attempt < 200 && refused === undefined; attempt++) {
      const response = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: TO, message: 'x'.repeat(2_000) },
        account.apiKey,
      );
      const key = `${response.statusCode} ${response.statusCode === 200 ? '' : response.json().error}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (response.statusCode !== 200) refused = response;
    }
    assert.ok(refused !== undefined, `the database filled up: ${JSON.stringify([...statuses])}`);
    assertStorageUnavailable(refused);
  });
});
