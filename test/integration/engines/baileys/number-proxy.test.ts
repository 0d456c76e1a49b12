/**
 * A number's proxy (ADR 0063), with real proxies from npm: `proxy` (HTTP CONNECT) and
 * `simple-socks` (SOCKS5). Baileys' own socket, made by the gateway's socket factory from the
 * proxy stored for the number, connects through them to a local websocket server standing in for
 * WhatsApp's; a dead or refusing proxy ends as a failed session with a reason, not a loop.
 */
import assert from 'node:assert/strict';
import { resumeAsLinked } from '../../../support/baileys-number.ts';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { encryptedStream, proto } from 'baileys';
import { createProxy } from 'proxy';
import socks from 'simple-socks';
import { newWhatsAppNumber, type WhatsAppNumber } from '../../../../src/domain/model.ts';
import type { E164 } from '../../../../src/domain/phone.ts';
import { parseProxyUrl } from '../../../../src/domain/proxy-url.ts';
import { operatorScope } from '../../../../src/domain/tenant-scope.ts';
import { BaileysSession } from '../../../../src/engines/baileys/baileys-session.ts';
import { createBaileysSocket } from '../../../../src/engines/baileys/session-socket.ts';
import { dialects } from '../../../support/databases.ts';
import { MemoryAuthState, RecordingEvents, RecordingSocketFactory, recordingLogger } from '../../../support/fake-whatsapp.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../../support/gateway.ts';
import { ignoreCleanupFailure } from '../../../support/ignore.ts';
import { UNFENCED_TEST_LEASE } from '../../../support/leases.ts';
import { waitForValue, waitUntil } from '../../../support/waiting.ts';

const PROXY_USER = 'number-7';
const PROXY_PASSWORD = 'pr0xy-s3cret';
const OUR_PHONE = '+447700900100' as E164;

/** What WhatsApp's side saw: each websocket's path and the first bytes Baileys sent on it. */
interface LocalWhatsApp {
  url: URL;
  firstFrames: Buffer[];
  close(): Promise<void>;
}

/**
 * A websocket server reduced to what the test needs: it accepts the upgrade (RFC 6455's accept
 * key) and keeps the payload of the first frame, which for Baileys is its Noise hello ("WA"...).
 */
async function startLocalWhatsApp(): Promise<LocalWhatsApp> {
  const firstFrames: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((_request, response) => response.writeHead(426).end());
  server.on('upgrade', (request, socket: Socket) => {
    sockets.add(socket);
    const accept = createHash('sha1')
      .update(`${request.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    let received: Buffer | undefined = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      if (received === undefined) return;
      received = Buffer.concat([received, chunk]);
      const frame = unmaskedPayload(received);
      if (frame === undefined) return;
      firstFrames.push(frame);
      received = undefined;
    });
    // A session stopped mid-handshake resets its socket; that is the test's end, not a failure.
    socket.on('error', ignoreCleanupFailure);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: new URL(`ws://127.0.0.1:${port}/ws/chat`),
    firstFrames,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The payload of a client's first websocket frame (always masked), once all of it has come. */
function unmaskedPayload(bytes: Buffer): Buffer | undefined {
  if (bytes.length < 2) return undefined;
  let length = bytes[1]! & 0x7f;
  let offset = 2;
  if (length === 126) [length, offset] = [bytes.readUInt16BE(2), 4];
  else if (length === 127) [length, offset] = [Number(bytes.readBigUInt64BE(2)), 10];
  if (bytes.length < offset + 4 + length) return undefined;
  const mask = bytes.subarray(offset, offset + 4);
  return Buffer.from(bytes.subarray(offset + 4, offset + 4 + length).map((byte, index) => byte ^ mask[index % 4]!));
}

/** The `proxy` package's HTTP proxy, asking for Basic credentials, recording each CONNECT's target. */
async function startHttpProxy(): Promise<{ port: number; connects: string[]; close(): Promise<void> }> {
  const connects: string[] = [];
  const server = createProxy(http.createServer());
  const expected = `Basic ${Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64')}`;
  server.authenticate = (request) => request.headers['proxy-authorization'] === expected;
  server.on('connect', (request: http.IncomingMessage) => connects.push(request.url ?? ''));
  const close = closing(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connects, close };
}

/** simple-socks' SOCKS5 server with user/password, recording each connection it opened for a client. */
async function startSocksProxy(): Promise<{ port: number; connects: string[]; close(): Promise<void> }> {
  const connects: string[] = [];
  const server = socks.createServer({
    authenticate: (user, password, _socket, callback) =>
      user === PROXY_USER && password === PROXY_PASSWORD ? callback() : callback(new Error('wrong credentials')),
  });
  server.on('proxyConnect', (destination: { address: string; port: number }) =>
    connects.push(`${destination.address}:${destination.port}`),
  );
  const close = closing(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as AddressInfo).port, connects, close };
}

/** Closes a server and every connection still open to it (a tunnel outlives its request). */
function closing(server: http.Server | Server): () => Promise<void> {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of open) socket.destroy();
    });
}

/** A port nothing listens on: taken, then given back. */
async function deadPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

for (const dialect of dialects) {
  describe(`a number's proxy carries its WhatsApp connection (${dialect})`, () => {
    let whatsapp: LocalWhatsApp;
    let test: TestGateway;
    let accountId: string;
    let apiKey: string;

    before(async () => {
      whatsapp = await startLocalWhatsApp();
      test = await startTestGateway(
        dialect,
        {},
        {
          // The real socket of production, pointed at the local server instead of WhatsApp's.
          baileysSocketFactory: (options) => createBaileysSocket({ ...options, webSocketUrl: whatsapp.url }),
          baileysTimings: {
            reconnect: { baseDelayMs: 10, maxDelayMs: 50, jitterRatio: 0, maxConsecutiveFailures: 10, maxProxyFailures: 3 },
          },
        },
      );
      accountId = (await test.gateway.accounts.createAccount({ name: 'Behind a proxy', plan: 'pro' })).id;
      apiKey = (await test.gateway.apiKeys.createKey({ accountId })).plaintext;
    });

    after(async () => {
      await test.gateway.supervisor.stopAll();
      await test.close();
      await whatsapp.close();
    });

    /** A linked Baileys number with this proxy stored, its session started as at boot. */
    async function numberBehind(proxyUrl: string): Promise<WhatsAppNumber> {
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'baileys' });
      await test.gateway.numbers.setProxy(operatorScope(), number.id, proxyUrl);
      await resumeAsLinked(test, number);
      return number;
    }

    async function numberAsListed(number: WhatsAppNumber): Promise<{ status: string; status_reason: string | null }> {
      const response = await test.inject({ method: 'GET', url: '/numbers', headers: { authorization: `Bearer ${apiKey}` } });
      assert.equal(response.statusCode, 200);
      const listed = (response.json() as { numbers: { phone: string; status: string; status_reason: string | null }[] }).numbers;
      return listed.find((entry) => entry.phone === number.phone)!;
    }

    async function failedAs(number: WhatsAppNumber): Promise<string> {
      return waitForValue(async () => {
        const listed = await numberAsListed(number);
        return listed.status === 'failed' ? listed.status_reason! : undefined;
      }, `${number.phone} to fail`);
    }

    it("an HTTP proxy sees the CONNECT of the number's websocket, which reaches WhatsApp's side through it", async () => {
      const proxy = await startHttpProxy();
      try {
        const frames = whatsapp.firstFrames.length;
        const number = await numberBehind(`http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${proxy.port}`);
        await waitUntil(() => whatsapp.firstFrames.length > frames, "Baileys' hello to reach the local WhatsApp");
        assert.deepEqual(proxy.connects, [whatsapp.url.host], 'the proxy opened the one tunnel, to the websocket server');
        assert.equal(whatsapp.firstFrames.at(-1)!.subarray(0, 2).toString(), 'WA', "the first frame is Baileys' Noise hello");
        await test.gateway.supervisor.leaseLost(number.id);
      } finally {
        await proxy.close();
      }
    });

    it('a SOCKS5 proxy (socks5h: the proxy resolves the name) carries it the same way', async () => {
      const proxy = await startSocksProxy();
      try {
        const frames = whatsapp.firstFrames.length;
        const number = await numberBehind(`socks5h://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${proxy.port}`);
        await waitUntil(() => whatsapp.firstFrames.length > frames, "Baileys' hello to reach the local WhatsApp through SOCKS5");
        assert.deepEqual(proxy.connects, [whatsapp.url.host]);
        await test.gateway.supervisor.leaseLost(number.id);
      } finally {
        await proxy.close();
      }
    });

    it('a dead proxy fails the session after a bounded number of tries, with a reason that names it without its password', async () => {
      const port = await deadPort();
      const number = await numberBehind(`http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${port}`);
      const reason = await failedAs(number);
      assert.equal(
        reason,
        `the proxy http://***@127.0.0.1:${port} cannot be reached (ECONNREFUSED), 3 times in a row; correct or clear the number's proxy, then restart the number`,
      );
      assert.ok(!test.logLines.some((line) => line.includes(PROXY_PASSWORD)), 'the password is in no log line');

      // The operator corrects it: the failed session connects again at once, through the new proxy.
      const proxy = await startHttpProxy();
      try {
        const frames = whatsapp.firstFrames.length;
        const corrected = await test.gateway.numbers.setProxy(
          operatorScope(),
          number.id,
          `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${proxy.port}`,
        );
        assert.equal(await test.gateway.numberControl.reconnect(operatorScope(), corrected), true);
        await waitUntil(() => whatsapp.firstFrames.length > frames, 'the session to connect again through the corrected proxy');
        assert.deepEqual(proxy.connects, [whatsapp.url.host]);
        await test.gateway.supervisor.leaseLost(number.id);
      } finally {
        await proxy.close();
      }
    });

    it('a proxy that refuses its credentials (407) fails the session at once: retrying cannot help', async () => {
      const proxy = await startHttpProxy();
      try {
        const number = await numberBehind(`http://${PROXY_USER}:wrong@127.0.0.1:${proxy.port}`);
        const reason = await failedAs(number);
        assert.match(reason, /^the proxy http:\/\/\*\*\*@127\.0\.0\.1:\d+ refused its credentials \(HTTP 407\)/);
        assert.equal(proxy.connects.length, 1, 'one attempt, no reconnect loop');
      } finally {
        await proxy.close();
      }
    });
  });
}

describe("a number's media downloads go through its proxy", () => {
  for (const scheme of ['http', 'socks5'] as const)
    it(`Baileys' download of an incoming photo is tunnelled through the ${scheme} proxy`, async () => {
      const photo = Buffer.concat([Buffer.from('ffd8ffe000104a464946', 'hex'), randomBytes(20_000)]);
      const encrypted = await encryptedStream(photo, 'image');
      const files = http.createServer((_request, response) => response.end(fs.readFileSync(encrypted.encFilePath)));
      await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
      const proxy = scheme === 'http' ? await startHttpProxy() : await startSocksProxy();
      const factory = new RecordingSocketFactory();
      const auth = new MemoryAuthState();
      auth.markLinked('447700900100');
      const events = new RecordingEvents();
      const session = new BaileysSession({
        number: newWhatsAppNumber({ id: 'num_proxy', accountId: 'acc_proxy', phone: OUR_PHONE, engine: 'baileys', status: 'connecting' }),
        lease: UNFENCED_TEST_LEASE,
        socketFactory: factory.create,
        loadAuthState: async () => auth,
        loadProxy: async () => parseProxyUrl(`${scheme}://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${proxy.port}`),
        events,
        logger: recordingLogger().logger,
        timings: {
          reconnect: { baseDelayMs: 5, maxDelayMs: 40, jitterRatio: 0, maxConsecutiveFailures: 3 },
          watchdogIdleMs: 60_000,
          watchdogIntervalMs: 60_000,
          probeTimeoutMs: 20,
          placeholderWaitMs: 60_000,
          quotaCheckIntervalMs: 60 * 60_000,
        },
        version: undefined,
      });
      try {
        await session.start();
        factory.latest.openAs('447700900100');
        await waitUntil(() => session.status === 'connected', 'the session to connect');
        const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/d/f/encrypted.enc`;
        const message = Object.assign(
          proto.WebMessageInfo.fromObject({
            message: { imageMessage: { url, mediaKey: encrypted.mediaKey, mimetype: 'image/jpeg', fileLength: photo.length } },
            messageTimestamp: 1_700_000_000,
          }),
          { key: { remoteJid: '447700900123@s.whatsapp.net', fromMe: false, id: '3EB0PROXY' } },
        );
        factory.latest.emit('messages.upsert', { messages: [message], type: 'notify' });
        const incoming = await waitForValue(() => events.incoming[0], 'the photo to arrive');
        const chunks: Buffer[] = [];
        for await (const chunk of await incoming.media!.download()) chunks.push(chunk);
        assert.deepEqual(Buffer.concat(chunks), photo);
        assert.deepEqual(proxy.connects, [`127.0.0.1:${(files.address() as AddressInfo).port}`], 'the download went through the proxy');
      } finally {
        await session.stop();
        await proxy.close();
        files.close();
        fs.rmSync(encrypted.encFilePath, { force: true });
      }
    });
});
