import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Message } from '../../src/domain/model.ts';
import { findMessageById } from '../../src/store/repositories/messages.ts';
import { listMessages } from '../../src/store/repositories/message-pages.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../support/databases.ts';
import type { SeededAccount } from '../support/gateway.ts';
import { request, withTimeout, type HttpResult } from './raw-http.ts';
import { killAllServerProcesses, openDatabase, seedDatabase, startServerProcess } from './server-process.ts';

const CONCURRENT_SENDS = 20;

for (const dialect of dialects) {
  describe(`a 200 survives kill -9 (${dialect})`, () => {
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

    it('every send answered 200 before a SIGKILL is stored exactly once as sent after the restart', async () => {
      const server = await startServerProcess(database.url);
      const run = randomBytes(4).toString('hex');
      const texts = Array.from({ length: CONCURRENT_SENDS }, (_, index) => `durable ${run} #${index}`);

      // The whole process group dies the instant the first full 200 is read, while the other
      // sends are at whatever stage the race left them. Answers already in the socket buffers
      // are still read afterwards; they are promises the server made too.
      let killed = false;
      const answered = new Map<string, { message_id: string; status: string }>();
      const outcomes = await Promise.all(
        texts.map((text) =>
          request(server.port, {
            method: 'POST',
            path: '/send_message',
            apiKey: sender.apiKey,
            body: { from_phone: sender.phones[0], to_phone: '+14155550100', message: text },
          }).then(
            (response: HttpResult) => {
              if (response.statusCode === 200) {
                if (!killed) {
                  killed = true;
                  server.signalGroup('SIGKILL');
                }
                answered.set(text, JSON.parse(response.body));
              }
              return response.statusCode;
            },
            (error: Error) => error.message,
          ),
        ),
      );
      assert.ok(killed, `no send was answered 200 before the kill: ${JSON.stringify(outcomes)}\n${server.output()}`);
      const exit = await withTimeout(server.exited, 5_000, 'the killed server to exit');
      assert.equal(exit.signal, 'SIGKILL');

      // The restart is what recovers the SQLite WAL and fails sends the kill interrupted.
      const restarted = await startServerProcess(database.url);
      const store = openDatabase(database.url);
      try {
        const stored = await listMessages(store.db, { accountId: sender.accountId, direction: 'outbound', limit: 1_000 });
        const byText = new Map<string, Message[]>();
        for (const message of stored.filter((row) => row.text.startsWith(`durable ${run} `))) {
          byText.set(message.text, [...(byText.get(message.text) ?? []), message]);
        }
        for (const [text, answer] of answered) {
          assert.equal(answer.status, 'sent');
          const rows = byText.get(text) ?? [];
          assert.equal(rows.length, 1, `"${text}" was answered 200 and must be stored exactly once`);
          assert.equal(rows[0]!.id, answer.message_id);
          assert.match(String(rows[0]!.status), /^(sent|delivered)$/, 'stored as accepted by the engine');
          assert.match(
            String((await findMessageById(store.db, answer.message_id))?.status),
            /^(sent|delivered)$/,
            'stored as accepted by the engine',
          );
        }
        // Sends the kill cut off were never promised; none may be stored twice. One cut off
        // before the engine answered stays queued until the interrupted-send sweep fails it
        // (a minute on), which test/integration/http/quota.test.ts covers.
        for (const [text, rows] of byText) {
          assert.equal(rows.length, 1, `"${text}" is stored ${rows.length} times`);
          assert.ok(
            ['queued', 'sent', 'delivered', 'unknown'].includes(rows[0]!.status),
            `"${text}" was left ${rows[0]!.status} after the restart`,
          );
        }
      } finally {
        await store.close();
      }

      const afterRestart = await request(restarted.port, {
        method: 'POST',
        path: '/send_message',
        apiKey: sender.apiKey,
        body: { from_phone: sender.phones[0], to_phone: '+14155550100', message: `after restart ${run}` },
      });
      assert.equal(afterRestart.statusCode, 200, afterRestart.body);
    });
  });
}
