import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../support/databases.ts';
import { startListeningGateway, type ListeningGateway } from './listening-gateway.ts';
import { jsonPostHead, RawHttpConnection, sleep, waitFor, withTimeout } from './raw-http.ts';
import { ignoreCutOff } from '../support/ignore.ts';

/** The lingering close of plugins/early-refusals.ts: a refused body is read for at most this long. */
const LINGER_MAX_MS = 5_000;
const BODY_DEADLINE_MS = 1_500;
/** A body that would take minutes at the trickle below, and within every body limit (forms: 64 KiB). */
const DECLARED_BODY_BYTES = 60_000;
const TRICKLE_INTERVAL_MS = 200;
const ATTACKERS_PER_KIND = 110;

/** The head of a request no credential backs: a wrong key, a sign-in or invite form, an unknown path. */
function unauthenticatedHead(port: number, kind: 'bad-key' | 'login' | 'invite' | 'unknown-path'): string {
  const body = Buffer.alloc(DECLARED_BODY_BYTES);
  if (kind === 'bad-key') return jsonPostHead(port, '/send_message', body, `wagw_live_sk_${'0'.repeat(64)}`);
  const path = { login: '/login', invite: `/invite/${randomBytes(16).toString('hex')}`, 'unknown-path': '/no-such-path' }[kind];
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${DECLARED_BODY_BYTES}\r\n\r\n`;
}

/** Sends one byte on every open connection at each interval until stopped, as a slow-body attacker does. */
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

async function sendsWithin(test: ListeningGateway, timeoutMs: number): Promise<number> {
  const startedAt = Date.now();
  await waitFor(
    async () => {
      const connection = await RawHttpConnection.open(test.port);
      try {
        const body = Buffer.from(JSON.stringify({ from_phone: test.sender.phones[0], to_phone: '+14155550100', message: 'still served' }));
        await connection.write(jsonPostHead(test.port, '/send_message', body, test.sender.apiKey));
        await connection.write(body);
        return (await connection.nextResponse(2_000)).statusCode === 200;
      } finally {
        connection.close();
      }
    },
    timeoutMs,
    'an authenticated client to be answered 200',
    100,
  );
  return Date.now() - startedAt;
}

for (const dialect of dialects) {
  describe(`a request refused before its body loses its connection (${dialect})`, () => {
    let test: ListeningGateway;
    const connections: RawHttpConnection[] = [];

    before(async () => {
      test = await startListeningGateway(dialect, { WAGW_UNAUTHENTICATED_BODY_TIMEOUT_MS: String(BODY_DEADLINE_MS) });
    });
    after(async () => {
      for (const connection of connections) connection.close();
      await test.close();
    });

    async function trickling(
      kind: Parameters<typeof unauthenticatedHead>[1],
    ): Promise<{ connection: RawHttpConnection; stop: () => Promise<void>; startedAt: number }> {
      const connection = await RawHttpConnection.open(test.port, 5_000, { allowHalfOpen: true });
      connections.push(connection);
      const startedAt = Date.now();
      await connection.write(unauthenticatedHead(test.port, kind));
      return { connection, stop: trickleOn([connection]), startedAt };
    }

    for (const [kind, status, error] of [
      ['bad-key', 401, 'invalid_api_key'],
      ['unknown-path', 404, 'not_found'],
    ] as const) {
      it(`a ${status} to a request whose body trickles is answered at once, says Connection: close, and the socket closes within the linger bound`, async () => {
        const { connection, stop } = await trickling(kind);
        try {
          const refusal = await connection.nextResponse(2_000);
          const answeredAt = Date.now();
          assert.equal(refusal.statusCode, status, refusal.body);
          assert.equal(JSON.parse(refusal.body).error, error);
          assert.equal(refusal.headers.connection, 'close');
          // This client ignores the server's FIN and goes on sending; the linger's bound ends it.
          await withTimeout(connection.closed, LINGER_MAX_MS + 2_000, 'the server to close the refused connection');
          assert.ok(Date.now() - answeredAt >= LINGER_MAX_MS - 500, 'the rest of the body was read for the linger, not cut at once');
        } finally {
          await stop();
        }
      });
    }

    for (const [kind, label] of [
      ['login', 'a sign-in'],
      ['invite', 'an invite'],
    ] as const) {
      it(`${label} form whose body trickles is cut at the body deadline with 408 body_timeout and its connection closed`, async () => {
        const { connection, stop, startedAt } = await trickling(kind);
        try {
          const refusal = await connection.nextResponse(BODY_DEADLINE_MS + 3_000);
          const elapsedMs = Date.now() - startedAt;
          assert.equal(refusal.statusCode, 408, refusal.body);
          assert.ok(elapsedMs >= BODY_DEADLINE_MS - 100, `cut after ${elapsedMs} ms, not before the deadline`);
          assert.match(refusal.body, /did not arrive within 1500 ms/);
          assert.equal(refusal.headers.connection, 'close');
          await withTimeout(connection.closed, LINGER_MAX_MS + 2_000, 'the server to close the timed-out connection');
        } finally {
          await stop();
        }
      });
    }

    it('a form sent at once, without a session, still gets its ordinary answer', async () => {
      const form = Buffer.from('email=nobody%40example.com&password=wrong');
      const connection = await RawHttpConnection.open(test.port);
      connections.push(connection);
      await connection.write(
        `POST /login HTTP/1.1\r\nHost: 127.0.0.1:${test.port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n`,
      );
      await connection.write(form);
      const answer = await connection.nextResponse(5_000);
      assert.equal(answer.statusCode, 403, 'refused for its missing CSRF token, not for time');
    });
  });

  describe(`hundreds of trickling unauthenticated sockets do not keep an authenticated client out (${dialect})`, () => {
    const total = ATTACKERS_PER_KIND * 3;
    let test: ListeningGateway;
    const attackers: RawHttpConnection[] = [];

    before(async () => {
      // Every slot of the server is the attackers' to take: one address, bounds at their count.
      test = await startListeningGateway(dialect, {
        WAGW_MAX_CONNECTIONS: String(total),
        WAGW_MAX_CONNECTIONS_PER_IP: String(total),
        WAGW_UNAUTHENTICATED_BODY_TIMEOUT_MS: String(BODY_DEADLINE_MS),
      });
    });
    after(async () => {
      for (const connection of attackers) connection.close();
      await test.close();
    });

    it(`${total} sockets trickling a 401, a sign-in form and a 404 hold every slot, and a fresh client with a key is answered once the bounds pass`, async (t) => {
      // Every socket connects first and only then do all send their heads, so that the refusals'
      // lingers start together: on a busy machine, opening 330 sockets one after another can take
      // longer than a linger, and the first would close before the last opened.
      const kinds = (['bad-key', 'login', 'unknown-path'] as const).flatMap((kind) => Array<typeof kind>(ATTACKERS_PER_KIND).fill(kind));
      for (const _kind of kinds) attackers.push(await RawHttpConnection.open(test.port, 5_000, { allowHalfOpen: true }));
      await Promise.all(attackers.map((connection, index) => connection.write(unauthenticatedHead(test.port, kinds[index]!))));
      const stop = trickleOn(attackers);
      try {
        // Each refusal is answered at once, but its socket is held for the linger: all are open now.
        assert.equal(await test.openConnections(), total, 'the attackers hold every slot');
        const waitedMs = await sendsWithin(test, BODY_DEADLINE_MS + LINGER_MAX_MS + 10_000);
        t.diagnostic(`the authenticated client was answered after ${waitedMs} ms`);
        assert.ok(waitedMs < BODY_DEADLINE_MS + LINGER_MAX_MS + 5_000, `answered after ${waitedMs} ms`);
        await waitFor(
          () => attackers.every((connection) => connection.isClosed),
          LINGER_MAX_MS + 5_000,
          'every attacking socket to be closed',
        );
        const answered = await Promise.all(
          attackers.map((connection) =>
            connection.nextResponse(100).then(
              (response) => response.statusCode,
              () => 0,
            ),
          ),
        );
        const counts = Object.fromEntries([401, 404, 408, 0].map((status) => [status, answered.filter((code) => code === status).length]));
        assert.deepEqual(
          counts,
          { 401: ATTACKERS_PER_KIND, 404: ATTACKERS_PER_KIND, 408: ATTACKERS_PER_KIND, 0: 0 },
          'every attacker got its refusal before its socket closed',
        );
      } finally {
        await stop();
      }
    });
  });
}
