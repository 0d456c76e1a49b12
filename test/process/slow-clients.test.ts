import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { findMessageById } from '../../src/store/repositories/messages.ts';
import { dialects } from '../support/databases.ts';
import { startListeningGateway, type ListeningGateway } from './listening-gateway.ts';
import { jsonPostHead, RawHttpConnection, sleep, waitFor, withTimeout } from './raw-http.ts';
import { ignoreCutOff } from '../support/ignore.ts';

const BODY_TRICKLE_MS = 6_000;
const BODY_SILENCE_MS = 2_000;
const HEADER_TRICKLE_MS = 2_500;
const MAX_CONNECTIONS = 5;
const MAX_CONNECTIONS_PER_IP = 3;

function sendBody(test: ListeningGateway, text: string): Buffer {
  return Buffer.from(JSON.stringify({ from_phone: test.sender.phones[0], to_phone: '+14155550100', message: text }));
}

/** A held connection still carries a send to its 200. */
async function assertSendsOn(connection: RawHttpConnection, test: ListeningGateway, label: string): Promise<void> {
  const text = `${label} ${randomBytes(4).toString('hex')}`;
  const body = sendBody(test, text);
  await connection.write(jsonPostHead(test.port, '/send_message', body, test.sender.apiKey));
  await connection.write(body);
  const response = await connection.nextResponse(5_000);
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(JSON.parse(response.body).message, text);
}

function healthRequest(port: number): string {
  return `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
}

for (const dialect of dialects) {
  describe(`slow senders are never cut off (${dialect})`, () => {
    let test: ListeningGateway;
    const connections: RawHttpConnection[] = [];

    before(async () => {
      test = await startListeningGateway(dialect);
    });
    after(async () => {
      for (const connection of connections) connection.close();
      await test.close();
    });

    it('no request or socket timer is armed on the listening server, and headers have their 60-second default', () => {
      // Node checks request and header deadlines on a periodic sweep, so trickles of a few
      // seconds cannot reveal a deadline of minutes; the settings can.
      const server = test.server.app.server;
      assert.equal(server.requestTimeout, 0);
      assert.equal(server.timeout, 0);
      assert.equal(server.headersTimeout, 60_000);
    });

    it('a body trickled three bytes at a time over six seconds, with a two-second silence, is answered 200 and sent', async () => {
      // The emoji's four bytes straddle pieces, so the body is reassembled before decoding.
      const text = `slow body 😀 ${randomBytes(4).toString('hex')}`;
      const body = sendBody(test, text);
      const connection = await RawHttpConnection.open(test.port);
      connections.push(connection);
      await connection.write(jsonPostHead(test.port, '/send_message', body, test.sender.apiKey));

      // A steady trickle resets any idle timer at every piece; the silence is what would trip one.
      const startedAt = Date.now();
      const half = Math.floor(body.length / 2);
      await connection.trickle(body.subarray(0, half), 3, BODY_TRICKLE_MS / 2);
      await sleep(BODY_SILENCE_MS);
      await connection.trickle(body.subarray(half, -1), 3, BODY_TRICKLE_MS / 2 - BODY_SILENCE_MS);
      assert.equal(connection.bytesReceived, 0, 'the server said nothing while the body was arriving');
      assert.equal(connection.isClosed, false, 'the server kept the connection open');
      await connection.write(body.subarray(-1));

      const response = await connection.nextResponse(5_000);
      assert.ok(Date.now() - startedAt >= BODY_TRICKLE_MS - 500, 'the body really took its time');
      assert.equal(response.statusCode, 200, response.body);
      const answer = JSON.parse(response.body);
      assert.equal(answer.status, 'sent');
      assert.equal(answer.message, text);
      assert.match(
        String((await findMessageById(test.gateway.store.db, answer.message_id))?.status),
        /^(sent|delivered)$/,
        'stored as accepted by the engine',
      );
    });

    it('a request whose headers arrive a few bytes at a time is answered 200 and sent', async () => {
      const text = `slow headers ${randomBytes(4).toString('hex')}`;
      const body = sendBody(test, text);
      const connection = await RawHttpConnection.open(test.port);
      connections.push(connection);

      await connection.trickle(jsonPostHead(test.port, '/send_message', body, test.sender.apiKey), 8, HEADER_TRICKLE_MS);
      assert.equal(connection.bytesReceived, 0, 'the server said nothing while the headers were arriving');
      await connection.write(body);

      const response = await connection.nextResponse(5_000);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(JSON.parse(response.body).status, 'sent');
      assert.equal(JSON.parse(response.body).message, text);
    });
  });

  describe(`WAGW_MAX_CONNECTIONS bounds open sockets (${dialect})`, () => {
    let test: ListeningGateway;
    const connections: RawHttpConnection[] = [];

    before(async () => {
      test = await startListeningGateway(dialect, { WAGW_MAX_CONNECTIONS: String(MAX_CONNECTIONS) });
    });
    after(async () => {
      for (const connection of connections) connection.close();
      await test.close();
    });

    /** Opens idle sockets until the server holds as many as the bound allows. */
    async function holdEverySlot(): Promise<RawHttpConnection[]> {
      const held: RawHttpConnection[] = [];
      for (let open = await test.openConnections(); open < MAX_CONNECTIONS; open++) {
        held.push(await RawHttpConnection.open(test.port));
      }
      connections.push(...held);
      await waitFor(async () => (await test.openConnections()) === MAX_CONNECTIONS, 5_000, 'the server to hold every slot');
      return held;
    }

    it('with the bound reached by idle sockets, a new connection is closed unanswered while the held ones still work', async () => {
      // Idle sockets that never send a byte are what a slow-loris client holds.
      const held = await holdEverySlot();

      const excess = await RawHttpConnection.open(test.port);
      connections.push(excess);
      await excess.write(healthRequest(test.port)).catch(ignoreCutOff);
      await withTimeout(excess.closed, 5_000, 'the server to close the connection over the bound');
      assert.equal(excess.bytesReceived, 0, 'the excess connection got no response');
      assert.equal(await test.openConnections(), MAX_CONNECTIONS);

      await assertSendsOn(held[0]!, test, 'within the bound');
    });

    it('once a held socket closes, a new connection is served again', async () => {
      await holdEverySlot();
      connections.find((connection) => !connection.isClosed)!.close();
      await waitFor(async () => (await test.openConnections()) < MAX_CONNECTIONS, 5_000, 'the server to notice the closed socket');

      const newcomer = await RawHttpConnection.open(test.port);
      connections.push(newcomer);
      await newcomer.write(healthRequest(test.port));
      const response = await newcomer.nextResponse(5_000);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(JSON.parse(response.body), { ok: true });
    });
  });

  describe(`WAGW_MAX_CONNECTIONS_PER_IP bounds one address's sockets (${dialect})`, () => {
    let test: ListeningGateway;
    const connections: RawHttpConnection[] = [];
    const open = async (from: { host?: string; localAddress?: string } = {}) => {
      const connection = await RawHttpConnection.open(test.port, 5_000, from);
      connections.push(connection);
      return connection;
    };

    before(async () => {
      // Listening on every IPv6 and IPv4 address, so that IPv4 clients arrive IPv4-mapped.
      test = await startListeningGateway(dialect, { HOST: '::', WAGW_MAX_CONNECTIONS_PER_IP: String(MAX_CONNECTIONS_PER_IP) });
    });
    after(async () => {
      for (const connection of connections) connection.close();
      await test.close();
    });

    async function assertServed(connection: RawHttpConnection): Promise<void> {
      await connection.write(healthRequest(test.port));
      const response = await connection.nextResponse(5_000);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(JSON.parse(response.body), { ok: true });
    }

    async function assertRefused(connection: RawHttpConnection): Promise<void> {
      await connection.write(healthRequest(test.port)).catch(ignoreCutOff);
      await withTimeout(connection.closed, 5_000, 'the server to close a connection over the per-address bound');
      assert.equal(connection.bytesReceived, 0, 'the refused connection got no response');
    }

    it('with one address at its bound, its next connection is closed unanswered, another address is served, and the held ones still work', async () => {
      const held: RawHttpConnection[] = [];
      for (let index = 0; index < MAX_CONNECTIONS_PER_IP; index++) held.push(await open());
      await waitFor(async () => (await test.openConnections()) === MAX_CONNECTIONS_PER_IP, 5_000, 'the server to hold the idle sockets');

      await assertRefused(await open());
      await assertServed(await open({ localAddress: '127.0.0.2' }));
      await assertServed(await open({ host: '::1' }));

      await assertSendsOn(held[0]!, test, 'within the per-address bound');
      for (const connection of held) assert.equal(connection.isClosed, false, 'held sockets stay open');
    });

    it('once one of its sockets closes, the address is served again', async () => {
      const fromFirst = connections.filter((connection) => !connection.isClosed && connection.socket.localAddress?.endsWith('127.0.0.1'));
      assert.equal(fromFirst.length, MAX_CONNECTIONS_PER_IP, 'the address is still at its bound');
      await assertRefused(await open());

      const openBefore = await test.openConnections();
      fromFirst[0]!.close();
      await waitFor(async () => (await test.openConnections()) < openBefore, 5_000, 'the server to notice the closed socket');
      await assertServed(await open());
    });
  });

  describe(`headers have a deadline, bodies do not (${dialect})`, () => {
    let test: ListeningGateway;
    const connections: RawHttpConnection[] = [];
    const HEADERS_TIMEOUT_MS = 1_000;
    const LONG_BODY_MS = 20_000;

    before(async () => {
      test = await startListeningGateway(dialect, { WAGW_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) });
    });
    after(async () => {
      for (const connection of connections) connection.close();
      await test.close();
    });

    it('a socket trickling headers that never end is closed with a 408, while a body trickled for twenty seconds gets its 200', async () => {
      const text = `twenty-second body ${randomBytes(4).toString('hex')}`;
      const body = sendBody(test, text);
      const patient = await RawHttpConnection.open(test.port);
      connections.push(patient);
      await patient.write(jsonPostHead(test.port, '/send_message', body, test.sender.apiKey));
      const bodyDone = patient.trickle(body.subarray(0, -1), 4, LONG_BODY_MS);

      // Header bytes, one every 200 ms, never reaching the blank line that ends them.
      const loris = await RawHttpConnection.open(test.port);
      connections.push(loris);
      const stalling = (async () => {
        const head = `POST /send_message HTTP/1.1\r\nHost: x\r\nX-Stall: ${'a'.repeat(200)}`;
        for (const byte of head) {
          if (loris.isClosed) return;
          await loris.write(byte).catch(ignoreCutOff);
          await sleep(200);
        }
      })();
      await withTimeout(loris.closed, HEADERS_TIMEOUT_MS * 5, 'the server to close a socket whose headers never end');
      // The close comes with a 408 in the envelope, so a client can tell why.
      const refusal = await loris.nextResponse(1_000);
      assert.equal(refusal.statusCode, 408);
      assert.equal(JSON.parse(refusal.body).error, 'headers_timeout');
      await stalling;

      assert.equal(patient.isClosed, false, 'the slow body is still being read');
      await bodyDone;
      await patient.write(body.subarray(-1));
      const response = await patient.nextResponse(10_000);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(JSON.parse(response.body).message, text);
    });
  });
}
