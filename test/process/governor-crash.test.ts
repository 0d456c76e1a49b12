import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findMessageById } from '../../src/store/repositories/messages.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../support/databases.ts';
import type { SeededAccount } from '../support/gateway.ts';
import { request, waitFor, withTimeout } from './raw-http.ts';
import { killAllServerProcesses, openDatabase, seedDatabase, startServerProcess } from './server-process.ts';

for (const dialect of dialects) {
  describe(`a queued message survives kill -9 (${dialect})`, () => {
    let database: TestDatabase;
    let sender: SeededAccount;

    before(async () => {
      database = await createTestDatabase(dialect);
      sender = await seedDatabase(database.url);
    });
    after(async () => {
      await killAllServerProcesses();
      await database.drop();
    });

    it('a message answered 202 before a SIGKILL is sent once, at its time, by the restarted server', async () => {
      const server = await startServerProcess(database.url);
      const sendAt = new Date(Date.now() + 4_000);
      const answer = await request(server.port, {
        method: 'POST',
        path: '/send_message',
        apiKey: sender.apiKey,
        body: { from_phone: sender.phones[0], to_phone: '+14155550100', message: 'scheduled, then killed', send_at: sendAt.toISOString() },
      });
      assert.equal(answer.statusCode, 202, answer.body);
      const id = JSON.parse(answer.body).message_id as string;
      server.signalGroup('SIGKILL');
      assert.equal((await withTimeout(server.exited, 5_000, 'the killed server to exit')).signal, 'SIGKILL');

      const store = openDatabase(database.url);
      try {
        assert.equal((await findMessageById(store.db, id))?.status, 'queued', 'it waits in the database while no server runs');
        await startServerProcess(database.url);
        const sent = await waitFor(
          async () => {
            const message = await findMessageById(store.db, id);
            return message !== undefined && message.status !== 'queued' ? message : undefined;
          },
          30_000,
          'the restarted server to send the queued message',
        );
        assert.match(sent.status, /^(sent|delivered)$/);
        assert.ok(sent.engineMessageId, 'the engine took it');
        assert.ok(sent.times!.sent!.getTime() >= sendAt.getTime(), 'not before its send_at');
        const rows = await store.db.selectFrom('messages').select('id').where('text', '=', 'scheduled, then killed').execute();
        assert.equal(rows.length, 1, 'stored once');
      } finally {
        await store.close();
      }
    });
  });
}
