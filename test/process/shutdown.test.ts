import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { findMessageById } from '../../src/store/repositories/messages.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../support/databases.ts';
import type { SeededAccount } from '../support/gateway.ts';
import { isConnectionRefused, jsonPostHead, RawHttpConnection, waitFor, withTimeout } from './raw-http.ts';
import { killAllServerProcesses, openDatabase, seedDatabase, startServerProcess, type ServerProcess } from './server-process.ts';

const STOP_LISTENING_TIMEOUT_MS = 5_000;
const EXIT_TIMEOUT_MS = 5_000;

/**
 * Opens a send whose body is only half written, and resolves once the server has the request:
 * `Expect: 100-continue` makes Node answer 100 Continue when it dispatches the request, which
 * is the one outside signal that the request is in flight rather than still in a kernel buffer.
 */
async function startHalfWrittenSend(server: ServerProcess, sender: SeededAccount, text: string) {
  const body = Buffer.from(JSON.stringify({ from_phone: sender.phones[0], to_phone: '+14155550100', message: text }));
  const connection = await RawHttpConnection.open(server.port);
  await connection.write(jsonPostHead(server.port, '/send_message', body, sender.apiKey, ['Expect: 100-continue']));
  const interim = await connection.nextResponse(5_000);
  assert.equal(interim.statusCode, 100, 'the server dispatched the request');
  const half = Math.floor(body.length / 2);
  await connection.write(body.subarray(0, half));
  return { connection, rest: body.subarray(half) };
}

for (const dialect of dialects) {
  describe(`graceful shutdown on SIGTERM (${dialect})`, () => {
    let database: TestDatabase;
    let sender: SeededAccount;
    const connections: RawHttpConnection[] = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      sender = await seedDatabase(database.url);
    });
    after(async () => {
      for (const connection of connections) connection.close();
      await killAllServerProcesses();
      await database.drop();
    });

    it('after SIGTERM new connections are refused while a request in flight is still being served', async () => {
      const server = await startServerProcess(database.url);
      assert.equal(await isConnectionRefused(server.port), false, 'the server accepts connections before the signal');
      const { connection, rest } = await startHalfWrittenSend(server, sender, `refused ${randomBytes(4).toString('hex')}`);
      connections.push(connection);

      server.signalGroup('SIGTERM');
      await waitFor(() => isConnectionRefused(server.port), STOP_LISTENING_TIMEOUT_MS, 'new connections to be refused');
      assert.equal(server.exitStatus(), undefined, 'the process is still up, serving the request in flight');

      await connection.write(rest);
      assert.equal((await connection.nextResponse()).statusCode, 200);
    });

    it('a request whose body is still arriving when SIGTERM comes is answered 200 and stored, then the process exits 0', async () => {
      const server = await startServerProcess(database.url);
      const text = `in flight ${randomBytes(4).toString('hex')}`;
      const { connection, rest } = await startHalfWrittenSend(server, sender, text);
      connections.push(connection);

      server.signalGroup('SIGTERM');
      // Refused connections prove shutdown has begun, so the rest of the body truly arrives
      // at a closing server rather than racing the signal.
      await waitFor(() => isConnectionRefused(server.port), STOP_LISTENING_TIMEOUT_MS, 'the server to stop listening');
      await connection.write(rest);

      const response = await connection.nextResponse();
      assert.equal(response.statusCode, 200, response.body);
      const answer = JSON.parse(response.body);
      assert.equal(answer.status, 'sent');
      assert.equal(answer.message, text);
      connection.close();

      const exit = await withTimeout(server.exited, EXIT_TIMEOUT_MS, 'the server to exit after SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null }, server.output());
      const store = openDatabase(database.url);
      try {
        const stored = await findMessageById(store.db, answer.message_id);
        assert.match(String(stored?.status), /^(sent|delivered)$/, 'stored as accepted by the engine');
        assert.equal(stored?.text, text);
      } finally {
        await store.close();
      }
    });

    it(
      'a client that keeps its connection open after the answer does not hold the shutdown: the process exits 0 within seconds',
      async () => {
        const server = await startServerProcess(database.url);
        const { connection, rest } = await startHalfWrittenSend(server, sender, `keep-alive ${randomBytes(4).toString('hex')}`);
        connections.push(connection);

        server.signalGroup('SIGTERM');
        await waitFor(() => isConnectionRefused(server.port), STOP_LISTENING_TIMEOUT_MS, 'the server to stop listening');
        await connection.write(rest);
        assert.equal((await connection.nextResponse()).statusCode, 200);

        // The connection stays open, as a pooling HTTP client leaves it. The answer should have
        // said `Connection: close`, or the idle connection should be closed by the server.
        const exit = await withTimeout(
          server.exited,
          EXIT_TIMEOUT_MS,
          `the server to exit while the client holds its connection (it was still up ${EXIT_TIMEOUT_MS} ms after the answer)`,
        );
        assert.deepEqual(exit, { code: 0, signal: null }, server.output());
      },
    );

    it('a request that never finishes its body cannot hold the process past WAGW_SHUTDOWN_GRACE_MS', async () => {
      const graceMs = 1_000;
      const server = await startServerProcess(database.url, { WAGW_SHUTDOWN_GRACE_MS: String(graceMs) });
      const { connection } = await startHalfWrittenSend(server, sender, `never finished ${randomBytes(4).toString('hex')}`);
      connections.push(connection);

      const signalledAt = Date.now();
      server.signalGroup('SIGTERM');
      const exit = await withTimeout(server.exited, graceMs + EXIT_TIMEOUT_MS, 'the grace period to end the process');
      assert.equal(exit.signal, null, 'the process ended itself');
      assert.ok(Date.now() - signalledAt >= graceMs, 'the request was given the whole grace period');
    });
  });
}
