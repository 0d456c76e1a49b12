import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../src/store/database.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../support/databases.ts';
import type { SeededAccount } from '../support/gateway.ts';
import { isConnectionRefused, jsonPostHead, RawHttpConnection, sleep, waitFor, withTimeout } from './raw-http.ts';
import { killAllServerProcesses, openDatabase, seedDatabase, startServerProcess, type ServerProcess } from './server-process.ts';
import { ignoreCutOff } from '../support/ignore.ts';

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

/**
 * The sessions stop and their leases are released before HTTP drains, so that a cluster's other
 * nodes take the numbers at once; a send still in flight then finds its number without an owner
 * on this node, and says so honestly (a cluster's node would forward it to the new owner).
 */
function assertHandedOver(response: { statusCode: number; headers: Record<string, string>; body: string }): void {
  assert.equal(response.statusCode, 503, response.body);
  assert.equal(JSON.parse(response.body).error, 'number_not_connected');
  assert.ok(Number(response.headers['retry-after']) > 0, 'the answer says when to retry');
}

/** Waits until the first start has made the operator, after which the signal handlers are installed. */
async function untilSignalsAreHandled(databaseUrl: string): Promise<void> {
  const store = openDatabase(databaseUrl);
  try {
    await waitFor(
      async () => (await store.db.selectFrom('users').select('id').where('is_operator', '=', 1).executeTakeFirst()) !== undefined,
      30_000,
      'the operator to be made',
    );
  } finally {
    await store.close();
  }
}

/** The node holding each number's lease, null where it is free. */
async function leaseHolders(store: Store): Promise<(string | null)[]> {
  return (await store.db.selectFrom('number_leases').select('node_id').execute()).map((row) => row.node_id);
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
      assertHandedOver(await connection.nextResponse());
    });

    it('a send whose body is still arriving when SIGTERM comes is answered 503 with Retry-After, as its number has been handed over, then the process exits 0', async () => {
      const server = await startServerProcess(database.url);
      const { connection, rest } = await startHalfWrittenSend(server, sender, `in flight ${randomBytes(4).toString('hex')}`);
      connections.push(connection);

      server.signalGroup('SIGTERM');
      // Refused connections prove shutdown has begun, so the rest of the body truly arrives
      // at a closing server rather than racing the signal.
      await waitFor(() => isConnectionRefused(server.port), STOP_LISTENING_TIMEOUT_MS, 'the server to stop listening');
      await connection.write(rest);

      assertHandedOver(await connection.nextResponse());
      connection.close();
      const exit = await withTimeout(server.exited, EXIT_TIMEOUT_MS, 'the server to exit after SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null }, server.output());
    });

    it('a client that keeps its connection open after the answer does not hold the shutdown: the process exits 0 within seconds', async () => {
      const server = await startServerProcess(database.url);
      const { connection, rest } = await startHalfWrittenSend(server, sender, `keep-alive ${randomBytes(4).toString('hex')}`);
      connections.push(connection);

      server.signalGroup('SIGTERM');
      await waitFor(() => isConnectionRefused(server.port), STOP_LISTENING_TIMEOUT_MS, 'the server to stop listening');
      await connection.write(rest);
      assertHandedOver(await connection.nextResponse());

      // The connection stays open, as a pooling HTTP client leaves it. The answer should have
      // said `Connection: close`, or the idle connection should be closed by the server.
      const exit = await withTimeout(
        server.exited,
        EXIT_TIMEOUT_MS,
        `the server to exit while the client holds its connection (it was still up ${EXIT_TIMEOUT_MS} ms after the answer)`,
      );
      assert.deepEqual(exit, { code: 0, signal: null }, server.output());
    });

    it('a body trickled past the grace period does not hold back the handover: the lease is released at once, and the process exits 0 within the grace period', async () => {
      const graceMs = 3_000;
      const server = await startServerProcess(database.url, { WAGW_SHUTDOWN_GRACE_MS: String(graceMs) });
      const { connection, rest } = await startHalfWrittenSend(server, sender, `trickled ${randomBytes(4).toString('hex')}`);
      connections.push(connection);
      // One byte every 200 ms: the body would take far longer than the grace period to arrive.
      let trickled = 0;
      const trickle = setInterval(() => {
        if (trickled < rest.length - 1 && !connection.isClosed)
          void connection.write(rest.subarray(trickled, ++trickled)).catch(ignoreCutOff);
      }, 200);
      const store = openDatabase(database.url);
      try {
        const signalledAt = Date.now();
        server.signalGroup('SIGTERM');
        // The number is free for another node while the request is still being drained.
        await waitFor(async () => (await leaseHolders(store)).every((holder) => holder === null), graceMs, 'the lease to be released');
        assert.equal(server.exitStatus(), undefined, 'the lease was released before the request in flight ended');

        const exit = await withTimeout(server.exited, graceMs + EXIT_TIMEOUT_MS, 'the server to exit');
        assert.deepEqual(exit, { code: 0, signal: null }, server.output());
        assert.ok(Date.now() - signalledAt < graceMs + 1_000, `exited ${Date.now() - signalledAt} ms after the signal`);
        assert.deepEqual(await leaseHolders(store), [null]);
        await withTimeout(connection.closed, 1_000, 'the trickling connection to be closed');
      } finally {
        clearInterval(trickle);
        await store.close();
      }
    });

    it('a request that never finishes its body cannot hold the process past WAGW_SHUTDOWN_GRACE_MS', async () => {
      const graceMs = 1_000;
      const server = await startServerProcess(database.url, { WAGW_SHUTDOWN_GRACE_MS: String(graceMs) });
      const { connection } = await startHalfWrittenSend(server, sender, `never finished ${randomBytes(4).toString('hex')}`);
      connections.push(connection);

      const signalledAt = Date.now();
      server.signalGroup('SIGTERM');
      const exit = await withTimeout(server.exited, graceMs + EXIT_TIMEOUT_MS, 'the grace period to end the process');
      assert.equal(exit.signal, null, 'the process ended itself');
      assert.equal(exit.code, 0, server.output());
      assert.ok(Date.now() - signalledAt >= graceMs * 0.75, 'the request was given the grace period less the time kept for the last flush');
    });

    it('a connection that was opened but never sent a request does not hold the stop: the process exits 0 well within the grace period', async () => {
      // What a node's connection pool leaves at an owner it gave up on while frozen: connected, never used.
      const graceMs = 10_000;
      const server = await startServerProcess(database.url, {
        WAGW_SHUTDOWN_GRACE_MS: String(graceMs),
        WAGW_SHUTDOWN_UNUSED_CONNECTION_MS: '500',
      });
      await untilSignalsAreHandled(database.url);
      await sleep(200);
      const unused = await RawHttpConnection.open(server.port);
      connections.push(unused);

      const signalledAt = Date.now();
      server.signalGroup('SIGTERM');
      const exit = await withTimeout(server.exited, graceMs + EXIT_TIMEOUT_MS, 'the process to exit');
      const tookMs = Date.now() - signalledAt;
      assert.equal(exit.code, 0, server.output());
      assert.ok(tookMs < graceMs / 2, `the unused connection was closed, not waited for: the stop took ${tookMs} ms`);
      assert.doesNotMatch(server.output(), /still in flight/, 'no request was in flight');
    });

    it('a connection made before SIGTERM whose request comes only after the node stopped listening is answered, not reset', async () => {
      // A client the balancer sent here just before the node left its rotation, scheduled late on a busy host.
      const server = await startServerProcess(database.url, { WAGW_SHUTDOWN_UNUSED_CONNECTION_MS: '60000' });
      await untilSignalsAreHandled(database.url);
      const late = await RawHttpConnection.open(server.port);
      connections.push(late);

      server.signalGroup('SIGTERM');
      await waitFor(() => isConnectionRefused(server.port), STOP_LISTENING_TIMEOUT_MS, 'the server to stop listening');
      // The request comes late, as a starved client's does: several of the drain's idle sweeps (every 100 ms) pass first.
      await sleep(500);
      const body = Buffer.from(JSON.stringify({ from_phone: sender.phones[0], to_phone: '+14155550100', message: 'late' }));
      await late.write(jsonPostHead(server.port, '/send_message', body, sender.apiKey));
      await late.write(body);
      assertHandedOver(await late.nextResponse());
      const exit = await withTimeout(server.exited, EXIT_TIMEOUT_MS, 'the server to exit once it answered');
      assert.deepEqual(exit, { code: 0, signal: null }, server.output());
    });
  });
}
