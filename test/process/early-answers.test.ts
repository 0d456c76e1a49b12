import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../support/databases.ts';
import { ignoreCutOff } from '../support/ignore.ts';
import { startListeningGateway, type ListeningGateway } from './listening-gateway.ts';
import { jsonPostHead, RawHttpConnection, sleep, waitFor, withTimeout } from './raw-http.ts';

/** The lingering close of plugins/early-refusals.ts: an unread body is read for at most this long. */
const LINGER_MAX_MS = 5_000;
/** A body that would take minutes at the trickle below. */
const DECLARED_BODY_BYTES = 60_000;
const TRICKLE_INTERVAL_MS = 200;
const ADDRESSES = 16;
const ATTACKERS = 300;

/**
 * An answer given before the request's body has arrived ends the connection, whatever its status
 * (issue 38 item 2, issue 39 item 1): a 200 from /health, the dashboard's 303 to its sign-in page,
 * a 429 for an upload larger than the whole upload window. A trickled body never holds a slot
 * for longer than the linger, and a client that keeps its connection is told to open another.
 */
function trickledHead(port: number, kind: 'health' | 'form'): string {
  const [method, path, type] =
    kind === 'health' ? ['GET', '/health', 'application/json'] : ['POST', '/numbers/num_0000/simulate', 'multipart/form-data; boundary=x'];
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${type}\r\nContent-Length: ${DECLARED_BODY_BYTES}\r\n\r\n`;
}

function trickleOn(connections: RawHttpConnection[]): () => Promise<void> {
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      for (const connection of connections) if (!connection.isClosed) connection.write('a').catch(ignoreCutOff);
      await sleep(TRICKLE_INTERVAL_MS);
    }
  })();
  return async () => {
    stopped = true;
    await running;
  };
}

for (const dialect of dialects) {
  describe(`an early answer ends a connection whose body has not arrived (${dialect})`, () => {
    let test: ListeningGateway;
    const connections: RawHttpConnection[] = [];

    before(async () => {
      test = await startListeningGateway(dialect, {
        WAGW_MAX_CONNECTIONS: String(ATTACKERS),
        WAGW_MAX_CONNECTIONS_PER_IP: String(ATTACKERS),
        WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW: 'starter:1,pro:1,enterprise:1',
      });
    });
    after(async () => {
      for (const connection of connections) connection.close();
      await test.close();
    });

    describe('each on a connection of its own', { concurrency: true }, () => {
      for (const [kind, status] of [
        ['health', 200],
        ['form', 303],
      ] as const) {
        it(`a ${status} to a request whose body trickles says Connection: close, and the socket closes within the linger bound`, async () => {
          const connection = await RawHttpConnection.open(test.port, 5_000, { allowHalfOpen: true });
          connections.push(connection);
          await connection.write(trickledHead(test.port, kind));
          const stop = trickleOn([connection]);
          try {
            const answer = await connection.nextResponse(5_000);
            assert.equal(answer.statusCode, status, answer.body);
            assert.equal(answer.headers.connection, 'close');
            await withTimeout(connection.closed, LINGER_MAX_MS + 3_000, 'the server to close the connection');
          } finally {
            await stop();
          }
        });
      }
    });

    it('a 429 upload_rate_exceeded for an upload larger than the whole window says Connection: close and the connection ends', async () => {
      const connection = await RawHttpConnection.open(test.port);
      connections.push(connection);
      const file = Buffer.alloc(2 * 1024 * 1024, 7);
      await connection.write(
        `POST /media HTTP/1.1\r\nHost: 127.0.0.1:${test.port}\r\nAuthorization: Bearer ${test.sender.apiKey}\r\n` +
          `Content-Type: application/octet-stream\r\nContent-Length: ${file.length}\r\n\r\n`,
      );
      connection.write(file).catch(ignoreCutOff);
      const answer = await connection.nextResponse(10_000);
      assert.equal(answer.statusCode, 429, answer.body);
      assert.equal(JSON.parse(answer.body).error, 'upload_rate_exceeded');
      assert.equal(answer.headers.connection, 'close', 'the client is told to open another connection');
      await withTimeout(connection.closed, LINGER_MAX_MS + 3_000, 'the server to close the connection');
      const next = await RawHttpConnection.open(test.port);
      connections.push(next);
      await next.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${test.port}\r\n\r\n`);
      assert.equal((await next.nextResponse(5_000)).statusCode, 200, 'a new connection is served');
    });

    it(`${ATTACKERS} trickled bodies to /health and the sandbox form from ${ADDRESSES} addresses hold no slot past the linger: a keyed client gets its 200`, async (t) => {
      const attackers: RawHttpConnection[] = [];
      for (let index = 0; index < ATTACKERS; index++) {
        const connection = await RawHttpConnection.open(test.port, 5_000, {
          localAddress: `127.0.0.${(index % ADDRESSES) + 1}`,
          allowHalfOpen: true,
        });
        attackers.push(connection);
        connections.push(connection);
        await connection.write(trickledHead(test.port, index % 2 === 0 ? 'health' : 'form'));
      }
      const stop = trickleOn(attackers);
      const startedAt = Date.now();
      try {
        await waitFor(
          async () => {
            const connection = await RawHttpConnection.open(test.port).catch(() => undefined);
            if (connection === undefined) return false;
            try {
              const body = Buffer.from(
                JSON.stringify({ from_phone: test.sender.phones[0], to_phone: '+14155550100', message: 'still served' }),
              );
              await connection.write(jsonPostHead(test.port, '/send_message', body, test.sender.apiKey));
              await connection.write(body);
              return (await connection.nextResponse(2_000)).statusCode === 200;
            } catch {
              return false;
            } finally {
              connection.close();
            }
          },
          LINGER_MAX_MS + 15_000,
          'the keyed client to be answered 200',
          100,
        );
        t.diagnostic(`the keyed client was answered after ${Date.now() - startedAt} ms`);
        await waitFor(() => attackers.every((connection) => connection.isClosed), LINGER_MAX_MS + 5_000, 'every trickling socket to close');
      } finally {
        await stop();
      }
    });
  });
}
