/**
 * Adapter tests at the WhatsApp boundary: fake sockets (fake-whatsapp.ts) emit Baileys-shaped
 * events built with Baileys' own `proto` types; everything from the session inwards is real.
 */
import { UNFENCED_TEST_LEASE } from '../../../support/leases.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Boom } from '@hapi/boom';
import { encryptedStream, proto, ReachoutTimelockEnforcementType } from 'baileys';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { WAMessage, WAMessageKey, WAMessageUpdate } from 'baileys';
import { loadConfig } from '../../../../src/config.ts';
import { newId } from '../../../../src/domain/ids.ts';
import { newWhatsAppNumber, type SessionStatus, type WhatsAppNumber } from '../../../../src/domain/model.ts';
import type { E164 } from '../../../../src/domain/phone.ts';
import { BaileysEngine } from '../../../../src/engines/baileys/baileys-engine.ts';
import { messageOfRetryToken, retryTokenOf } from '../../../../src/engines/baileys/media-retry-token.ts';
import { BaileysSession, type LinkUpdate, type SessionTimings } from '../../../../src/engines/baileys/baileys-session.ts';
import { EngineSendError, type EngineSendFailure } from '../../../../src/engines/engine.ts';
import { SecretBox } from '../../../../src/secrets/secret-box.ts';
import { openStore, type Store } from '../../../../src/store/database.ts';
import { migrateToLatest } from '../../../../src/store/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../../../support/databases.ts';
import {
  type FakeSocket,
  MemoryAuthState,
  RecordingEvents,
  RecordingSocketFactory,
  recordingLogger,
  waitFor,
  WARN_LEVEL,
} from '../../../support/fake-whatsapp.ts';

const OUR_PHONE = '+447700900100' as E164;
const OUR_DIGITS = '447700900100';
const OTHER_PHONE = '+447700900999';
const SENDER_PN_JID = '447700900123@s.whatsapp.net';
const SENDER_PHONE = '+447700900123';
const SENDER_LID_JID = '123456789012345@lid';
const RECIPIENT = '+447700900200' as E164;

const BASE_DELAY_MS = 5;
const MAX_DELAY_MS = 40;
/** Long enough for any backoff of these timings to have fired, had one been scheduled. */
const LONGER_THAN_ANY_BACKOFF_MS = 3 * MAX_DELAY_MS;

const reconnect = { baseDelayMs: BASE_DELAY_MS, maxDelayMs: MAX_DELAY_MS, jitterRatio: 0, maxConsecutiveFailures: 3 };
/** The watchdog stays out of the way in tests that are not about it. */
const QUIET_TIMINGS: SessionTimings = {
  reconnect,
  watchdogIdleMs: 60_000,
  watchdogIntervalMs: 60_000,
  probeTimeoutMs: 20,
  placeholderWaitMs: 60_000,
  quotaCheckIntervalMs: 60 * 60_000,
};
const WATCHDOG_TIMINGS: SessionTimings = {
  reconnect,
  watchdogIdleMs: 20,
  watchdogIntervalMs: 10,
  probeTimeoutMs: 20,
  placeholderWaitMs: 60_000,
  quotaCheckIntervalMs: 60 * 60_000,
};

function ourNumber(): WhatsAppNumber {
  const at = new Date();
  return newWhatsAppNumber(
    {
      id: newId('number'),
      accountId: newId('account'),
      phone: OUR_PHONE,
      engine: 'baileys',
      status: 'connecting',
    },
    at,
  );
}

/** A message as Baileys emits it: proto for the body, a plain key (proto's has no `remoteJidAlt`). */
function received(body: Record<string, unknown>, key: Partial<WAMessageKey> = {}): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: body, messageTimestamp: 1_700_000_000 });
  return Object.assign(info, { key: { remoteJid: SENDER_PN_JID, fromMe: false, id: '3EB0C0FFEE', ...key } });
}

function receiptUpdate(id: string, status: proto.WebMessageInfo.Status, extra: Partial<WAMessageUpdate['update']> = {}): WAMessageUpdate {
  return { key: { remoteJid: SENDER_PN_JID, fromMe: true, id }, update: { status, ...extra } };
}

// ---------------------------------------------------------------------------------------------
// A session under test
// ---------------------------------------------------------------------------------------------

interface Harness {
  session: BaileysSession;
  factory: RecordingSocketFactory;
  auth: MemoryAuthState;
  events: RecordingEvents;
  logLines: { level: number; msg: string }[];
  linkUpdates: LinkUpdate[];
}

const running: BaileysSession[] = [];

afterEach(async () => {
  for (const session of running.splice(0)) await session.stop();
});

async function startSession(
  options: { timings?: SessionTimings; prepare?: RecordingSocketFactory['prepare']; linked?: boolean } = {},
): Promise<Harness> {
  const factory = new RecordingSocketFactory();
  if (options.prepare) factory.prepare = options.prepare;
  const auth = new MemoryAuthState();
  if (options.linked) auth.markLinked(OUR_DIGITS);
  const events = new RecordingEvents();
  const { logger, lines } = recordingLogger();
  const session = new BaileysSession({
    number: ourNumber(),
    lease: UNFENCED_TEST_LEASE,
    socketFactory: factory.create,
    loadAuthState: async () => auth,
    loadProxy: async () => undefined,
    events,
    logger,
    timings: options.timings ?? QUIET_TIMINGS,
    version: undefined,
  });
  const linkUpdates: LinkUpdate[] = [];
  session.onLinkUpdate((update) => linkUpdates.push(update));
  running.push(session);
  await session.start();
  return { session, factory, auth, events, logLines: lines, linkUpdates };
}

async function connected(harness: Harness): Promise<FakeSocket> {
  const socket = harness.factory.latest;
  socket.openAs(OUR_DIGITS);
  await waitFor('the session is connected', () => harness.session.status === 'connected');
  return socket;
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe('Baileys session: each disconnect reason gets its own answer', () => {
  for (const code of [401, 403]) {
    it(`a ${code} close logs the number out, wipes the creds and does not reconnect`, async () => {
      const harness = await startSession({ linked: true });
      harness.factory.latest.closeWith(code);
      await waitFor('the session is logged out', () => harness.session.status === 'logged_out');
      await delay(LONGER_THAN_ANY_BACKOFF_MS);
      assert.equal(harness.auth.clearCalls, 1);
      assert.equal(harness.factory.sockets.length, 1, 'no new socket');
      assert.equal(harness.factory.sockets[0]?.endCalls.length, 1, 'the closed socket is ended');
      assert.deepEqual(harness.events.statusNames(), ['connecting', 'logged_out']);
      assert.match(harness.events.statuses.at(-1)?.reason ?? '', new RegExp(String(code)));
    });
  }

  it('a 515 (restart required after pairing) makes a new socket at once, without backoff or a status change', async () => {
    const harness = await startSession();
    harness.factory.latest.closeWith(515);
    await waitFor('a second socket exists', () => harness.factory.sockets.length === 2);
    assert.equal(harness.session.status, 'connecting');
    assert.equal(harness.auth.clearCalls, 0);
    await delay(LONGER_THAN_ANY_BACKOFF_MS);
    assert.equal(harness.factory.sockets.length, 2);
  });

  it('a 440 (another client replaced the session) is reported as a conflict and not fought', async () => {
    const harness = await startSession({ linked: true });
    harness.factory.latest.closeWith(440);
    await waitFor('the session is in conflict', () => harness.session.status === 'conflict');
    await delay(LONGER_THAN_ANY_BACKOFF_MS);
    assert.equal(harness.factory.sockets.length, 1);
    assert.equal(harness.auth.clearCalls, 0, 'the creds are kept');
  });

  it('a 408 while linking means the QR codes expired: link_expired, and no new socket', async () => {
    const harness = await startSession();
    assert.equal(harness.auth.state.creds.me, undefined);
    harness.factory.latest.emit('connection.update', { qr: 'qr-one' });
    harness.factory.latest.closeWith(408);
    await waitFor('the link expired', () => harness.session.status === 'link_expired');
    await delay(LONGER_THAN_ANY_BACKOFF_MS);
    assert.equal(harness.factory.sockets.length, 1);
    assert.equal(harness.linkUpdates.at(-1)?.status, 'link_expired');
    assert.match(harness.linkUpdates.at(-1)?.reason ?? '', /QR codes expired/);
  });

  it('a 408 while linking before any QR is a connection that never came up, not an expired QR', async () => {
    const harness = await startSession();
    harness.factory.latest.closeWith(408);
    await waitFor('the session is disconnected', () => harness.session.status === 'disconnected');
    assert.doesNotMatch(harness.linkUpdates.at(-1)?.reason ?? '', /QR/);
  });

  for (const code of [408, 428, 500]) {
    it(`a ${code} close of a linked number reports disconnected, then reconnects after the backoff`, async () => {
      const harness = await startSession({ linked: true });
      const closedAt = Date.now();
      harness.factory.latest.closeWith(code);
      await waitFor('the session is disconnected', () => harness.session.status === 'disconnected');
      await waitFor('a new socket exists', () => harness.factory.sockets.length === 2);
      const [first, second] = harness.factory.sockets;
      assert.ok(second!.createdAt - closedAt >= BASE_DELAY_MS - 1, 'the new socket waited for the backoff');
      assert.equal(first!.endCalls.length, 1);
      assert.match(harness.events.statuses.at(-1)?.reason ?? '', new RegExp(`\\(${code}\\)`));
      assert.equal(harness.auth.clearCalls, 0);
    });
  }

  it('repeated failures back off, then give up as failed after the bound, with one warning per backoff step', async () => {
    const harness = await startSession({ linked: true });
    for (let attempt = 1; attempt <= 2; attempt++) {
      harness.factory.latest.closeWith(500);
      await waitFor(`socket ${attempt + 1} exists`, () => harness.factory.sockets.length === attempt + 1);
    }
    harness.factory.latest.closeWith(500);
    await waitFor('the session failed', () => harness.session.status === 'failed');
    await delay(LONGER_THAN_ANY_BACKOFF_MS);
    assert.equal(harness.factory.sockets.length, 3, 'no socket after giving up');
    assert.deepEqual(harness.events.statusNames(), ['connecting', 'disconnected', 'failed']);
    const warnings = harness.logLines.filter((line) => line.level === WARN_LEVEL);
    assert.ok(warnings.length <= 2, `at most one warning per backoff step (2 steps), got ${warnings.length}`);
    const [, second, third] = harness.factory.sockets;
    assert.ok(third!.createdAt - second!.createdAt >= 2 * BASE_DELAY_MS - 1, 'the second backoff is longer than the first');
  });
});

describe('Baileys session: one live socket at a time', () => {
  for (const [name, code] of [
    ['a restart (515)', 515],
    ['a backoff reconnect (500)', 500],
  ] as const) {
    it(`on ${name}, the old socket is ended and its listeners removed before the new one is made`, async () => {
      const harness = await startSession({ linked: true });
      const old = harness.factory.latest;
      old.closeWith(code);
      await waitFor('a new socket exists', () => harness.factory.sockets.length === 2);
      assert.deepEqual(harness.factory.earlierSocketsClosedAtCreation, [true, true]);
      assert.equal(old.listenerCount(), 0);

      const statusesBefore = harness.events.statuses.length;
      old.closeWith(401);
      old.openAs(OUR_DIGITS);
      old.emit('messages.upsert', { messages: [received({ conversation: 'late' })], type: 'notify' });
      await delay(LONGER_THAN_ANY_BACKOFF_MS);
      assert.equal(harness.events.statuses.length, statusesBefore, 'the old socket changes no status');
      assert.equal(harness.events.incoming.length, 0);
      assert.equal(harness.auth.clearCalls, 0);
      assert.equal(harness.factory.sockets.length, 2);
    });
  }
});

describe('Baileys session: linking', () => {
  it('rotating QR codes reach the link listeners in order', async () => {
    const harness = await startSession();
    harness.factory.latest.emit('connection.update', { qr: 'qr-one' });
    harness.factory.latest.emit('connection.update', { qr: 'qr-two' });
    await waitFor('both codes arrived', () => harness.linkUpdates.filter((update) => update.qr).length === 2);
    assert.deepEqual(
      harness.linkUpdates.filter((update) => update.qr !== undefined),
      [
        { qr: 'qr-one', status: 'connecting' },
        { qr: 'qr-two', status: 'connecting' },
      ],
    );
  });

  it('a pairing code is asked for only once the socket is ready to link, with the phone digits, and reaches the link listeners', async () => {
    const harness = await startSession();
    const code = harness.session.requestPairingCode(1_000);
    await delay(20);
    assert.deepEqual(harness.factory.latest.pairingCodeCalls, [], 'not asked before the first QR');
    harness.factory.latest.emit('connection.update', { qr: 'qr-one' });
    assert.equal(await code, 'WAGW2345');
    assert.deepEqual(harness.factory.latest.pairingCodeCalls, [OUR_DIGITS]);
    assert.ok(harness.linkUpdates.some((update) => update.pairingCode === 'WAGW2345'));
  });

  it('a different phone completing the link is logged out, its creds wiped, and the reason names both phones', async () => {
    const harness = await startSession();
    const socket = harness.factory.latest;
    socket.openAs(OTHER_PHONE.slice(1));
    await waitFor('the session is logged out', () => harness.session.status === 'logged_out');
    assert.equal(socket.logoutCalls, 1);
    assert.equal(harness.auth.clearCalls, 1);
    assert.ok(!harness.events.statusNames().includes('connected'), 'never reported as connected');
    const reason = harness.events.statuses.at(-1)?.reason ?? '';
    assert.ok(reason.includes(OTHER_PHONE) && reason.includes(OUR_PHONE), reason);
    assert.equal(harness.session.socketForSending, undefined);
  });

  it('the right phone completing the link makes the session connected', async () => {
    const harness = await startSession();
    const socket = await connected(harness);
    assert.equal(socket.logoutCalls, 0);
    assert.deepEqual(harness.events.statusNames(), ['connecting', 'connected']);
    assert.equal(harness.session.socketForSending, socket);
  });
});

describe('Baileys session: incoming messages', () => {
  async function receive(harness: Harness, ...messages: WAMessage[]): Promise<void> {
    harness.factory.latest.emit('messages.upsert', { messages, type: 'notify' });
    await waitFor('the message is handed on', () => harness.events.incoming.length > 0);
  }

  it('a phone-addressed sender arrives with its E.164 phone and no LID', async () => {
    const harness = await startSession();
    await connected(harness);
    await receive(harness, received({ conversation: 'hello' }));
    assert.deepEqual(harness.events.incoming, [
      {
        toPhone: OUR_PHONE,
        fromPhone: SENDER_PHONE,
        fromLid: null,
        contentKind: 'text',
        text: 'hello',
        engineMessageId: '3EB0C0FFEE',
        receivedAt: new Date(1_700_000_000_000),
      },
    ]);
  });

  it('a photo arrives described, and its download goes to WhatsApp through Baileys, failing cleanly without a media key', async () => {
    const harness = await startSession();
    await connected(harness);
    await receive(harness, received({ imageMessage: { caption: 'look', mimetype: 'image/jpeg' } }));
    const [incoming] = harness.events.incoming;
    assert.equal(incoming?.contentKind, 'image');
    assert.equal(incoming?.text, 'look');
    assert.deepEqual(
      { kind: incoming?.media?.kind, mimeType: incoming?.media?.mimeType, fileName: incoming?.media?.fileName },
      { kind: 'image', mimeType: 'image/jpeg', fileName: null },
    );
    // The proto carries no media key or path, so Baileys refuses to fetch it; the receive path
    // then stores the message with its media marked unavailable (test/integration/media/received-media.test.ts).
    await assert.rejects(async () => {
      for await (const chunk of await incoming!.media!.download()) assert.fail(`no bytes expected, got ${chunk.length}`);
    });
  });

  it("a photo's bytes are fetched and decrypted by Baileys itself, from a file encrypted as WhatsApp's servers hold it", async () => {
    const photo = Buffer.concat([Buffer.from('ffd8ffe000104a464946', 'hex'), randomBytes(50_000)]);
    // Baileys encrypts it exactly as a sending phone would before uploading it.
    const encrypted = await encryptedStream(photo, 'image');
    const server = http.createServer((_request, response) => response.end(fs.readFileSync(encrypted.encFilePath)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const harness = await startSession();
      await connected(harness);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/d/f/encrypted.enc`;
      await receive(
        harness,
        received({ imageMessage: { url, mediaKey: encrypted.mediaKey, mimetype: 'image/jpeg', fileLength: photo.length } }),
      );
      const chunks: Buffer[] = [];
      for await (const chunk of await harness.events.incoming[0]!.media!.download()) chunks.push(chunk);
      assert.deepEqual(Buffer.concat(chunks), photo, 'the decrypted bytes are the photo');
    } finally {
      server.close();
      fs.rmSync(encrypted.encFilePath, { force: true });
    }
  });

  it('a download that failed is made again from the retry token alone, as after a restart', async () => {
    const voice = Buffer.concat([Buffer.from('OggS'), randomBytes(20_000)]);
    const encrypted = await encryptedStream(voice, 'audio');
    let requests = 0;
    // WhatsApp's media server fails the first fetch, then serves the file.
    const server = http.createServer((_request, response) => {
      requests += 1;
      if (requests === 1) {
        response.statusCode = 503;
        response.end();
        return;
      }
      response.end(fs.readFileSync(encrypted.encFilePath));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const harness = await startSession();
      await connected(harness);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/d/f/voice.enc`;
      await receive(
        harness,
        received({
          audioMessage: {
            url,
            mediaKey: encrypted.mediaKey,
            mimetype: 'audio/ogg; codecs=opus',
            ptt: true,
            fileLength: voice.length,
            seconds: 3,
          },
        }),
      );
      const media = harness.events.incoming[0]!.media!;
      await assert.rejects(async () => buffer(await media.download()), 'the first fetch fails');
      assert.ok(media.retryToken !== null);
      // The token crosses the database as text; a fresh message is built from it alone.
      const rebuilt = messageOfRetryToken(JSON.parse(JSON.stringify(media.retryToken)));
      assert.equal(rebuilt.key.id, '3EB0C0FFEE');
      assert.deepEqual(Buffer.from(rebuilt.message!.audioMessage!.mediaKey!), Buffer.from(encrypted.mediaKey));
      const chunks: Buffer[] = [];
      for await (const chunk of await harness.session.inbound.download(rebuilt)) chunks.push(chunk);
      assert.deepEqual(Buffer.concat(chunks), voice, 'the retry decrypts the same voice note');
      assert.equal(retryTokenOf({ key: { id: 'X' } }), null, 'a message without content cannot be fetched again');
    } finally {
      server.close();
      fs.rmSync(encrypted.encFilePath, { force: true });
    }
  });

  it('a LID-addressed sender with its phone in remoteJidAlt arrives with both, without a mapping lookup', async () => {
    const harness = await startSession();
    const socket = await connected(harness);
    await receive(harness, received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID, remoteJidAlt: SENDER_PN_JID }));
    assert.equal(harness.events.incoming[0]?.fromPhone, SENDER_PHONE);
    assert.equal(harness.events.incoming[0]?.fromLid, SENDER_LID_JID);
    assert.deepEqual(socket.lidLookups, []);
  });

  it("a LID-addressed sender is resolved to a phone through Baileys' LID mapping", async () => {
    const harness = await startSession();
    const socket = await connected(harness);
    socket.lidMapping.set(SENDER_LID_JID, SENDER_PN_JID);
    await receive(harness, received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID }));
    assert.deepEqual(socket.lidLookups, [SENDER_LID_JID]);
    assert.equal(harness.events.incoming[0]?.fromPhone, SENDER_PHONE);
    assert.equal(harness.events.incoming[0]?.fromLid, SENDER_LID_JID);
  });

  it('an unresolvable LID sender arrives with no phone and its LID, rather than a guess', async () => {
    const harness = await startSession();
    await connected(harness);
    await receive(harness, received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID }));
    assert.equal(harness.events.incoming[0]?.fromPhone, null);
    assert.equal(harness.events.incoming[0]?.fromLid, SENDER_LID_JID);
  });

  it('appended history and our own messages are not handed on; a group message is, with its group', async () => {
    const harness = await startSession();
    const socket = await connected(harness);
    socket.emit('messages.upsert', { messages: [received({ conversation: 'old' }, { id: 'APPENDED' })], type: 'append' });
    socket.emit('messages.upsert', { messages: [received({ conversation: 'mine' }, { id: 'OWN', fromMe: true })], type: 'notify' });
    socket.emit('messages.upsert', {
      messages: [received({ conversation: 'hi all' }, { id: 'GROUP', remoteJid: '120363025246125486@g.us', participant: SENDER_PN_JID })],
      type: 'notify',
    });
    await receive(harness, received({ conversation: 'marker' }, { id: 'MARKER' }));
    await delay(20);
    assert.deepEqual(harness.events.incoming.map((event) => [event.engineMessageId, event.group?.id ?? null]).sort(), [
      ['GROUP', '120363025246125486@g.us'],
      ['MARKER', null],
    ]);
  });
});

describe('Baileys session: receipts for what we sent', () => {
  const Status = proto.WebMessageInfo.Status;

  it('delivery, read, played and error acks become delivered, read, read and failed (with the code)', async () => {
    const harness = await startSession();
    const socket = await connected(harness);
    socket.emit('messages.update', [
      receiptUpdate('DELIVERED', Status.DELIVERY_ACK),
      receiptUpdate('READ', Status.READ),
      receiptUpdate('PLAYED', Status.PLAYED),
      receiptUpdate('FAILED', Status.ERROR, { messageStubParameters: ['463', 'the account is restricted'] }),
    ]);
    await waitFor('four receipts', () => harness.events.receipts.length === 4);
    assert.deepEqual(
      harness.events.receipts.map(({ engineMessageId, status, errorCode }) => ({ engineMessageId, status, errorCode })),
      [
        { engineMessageId: 'DELIVERED', status: 'delivered', errorCode: null },
        { engineMessageId: 'READ', status: 'read', errorCode: null },
        { engineMessageId: 'PLAYED', status: 'read', errorCode: null },
        { engineMessageId: 'FAILED', status: 'failed', errorCode: '463' },
      ],
    );
    // WhatsApp's ids are unique per sender only, so each receipt names the number it is for.
    assert.deepEqual(new Set(harness.events.receipts.map((receipt) => receipt.phone)), new Set([OUR_PHONE]));
  });

  it("a server ack is no receipt event: the send's own answer already said sent", async () => {
    const harness = await startSession();
    const socket = await connected(harness);
    socket.emit('messages.update', [receiptUpdate('SERVER', Status.SERVER_ACK)]);
    socket.emit('messages.update', [receiptUpdate('MARKER', Status.DELIVERY_ACK)]);
    await waitFor('the marker receipt', () => harness.events.receipts.length > 0);
    await delay(20);
    assert.deepEqual(
      harness.events.receipts.map((receipt) => receipt.engineMessageId),
      ['MARKER'],
    );
  });
});

describe('Baileys session: the watchdog', () => {
  it('a connected session with no traffic is probed with a cheap query about its own number', async () => {
    const harness = await startSession({ timings: WATCHDOG_TIMINGS });
    const socket = await connected(harness);
    await waitFor('a probe', () => socket.onWhatsAppCalls.length > 0);
    assert.deepEqual(socket.onWhatsAppCalls[0], [OUR_DIGITS]);
  });

  it('a probe that answers keeps the socket', async () => {
    const harness = await startSession({ timings: WATCHDOG_TIMINGS });
    const socket = await connected(harness);
    await waitFor('a probe', () => socket.onWhatsAppCalls.length > 0);
    await delay(100);
    assert.equal(harness.factory.sockets.length, 1);
    assert.equal(socket.endCalls.length, 0);
  });

  it('a probe that never answers restarts the session on a new socket, ending the old one', async () => {
    const harness = await startSession({
      timings: WATCHDOG_TIMINGS,
      prepare: (socket, index) => {
        if (index === 0) socket.answerOnWhatsApp = () => new Promise(() => undefined);
      },
    });
    const hung = await connected(harness);
    await waitFor('a new socket', () => harness.factory.sockets.length >= 2);
    assert.equal(hung.endCalls.length, 1);
    assert.equal(hung.listenerCount(), 0);
    assert.equal(harness.factory.earlierSocketsClosedAtCreation[1], true);
  });

  it('one probe that never answers restarts the session once, not once per watchdog tick', async () => {
    const harness = await startSession({
      timings: WATCHDOG_TIMINGS,
      prepare: (socket, index) => {
        if (index === 0) socket.answerOnWhatsApp = () => new Promise(() => undefined);
      },
    });
    await connected(harness);
    await waitFor('a new socket', () => harness.factory.sockets.length >= 2);
    await delay(100);
    assert.equal(harness.factory.sockets.length, 2, `sockets made: ${harness.factory.sockets.length}`);
  });

  it('a session stopped while a probe is pending makes no socket afterwards', async () => {
    const harness = await startSession({
      timings: WATCHDOG_TIMINGS,
      prepare: (socket) => {
        socket.answerOnWhatsApp = () => new Promise(() => undefined);
      },
    });
    const socket = await connected(harness);
    await waitFor('a probe', () => socket.onWhatsAppCalls.length > 0);
    await harness.session.stop();
    await delay(3 * WATCHDOG_TIMINGS.probeTimeoutMs);
    assert.equal(harness.factory.sockets.length, 1, `sockets made: ${harness.factory.sockets.length}`);
  });

  it('after a watchdog restart the session does not claim to be connected until the new socket opens', async () => {
    const harness = await startSession({
      timings: WATCHDOG_TIMINGS,
      prepare: (socket, index) => {
        if (index === 0) socket.answerOnWhatsApp = () => new Promise(() => undefined);
      },
    });
    await connected(harness);
    await waitFor('a new socket', () => harness.factory.sockets.length >= 2);
    assert.notEqual(harness.session.status, 'connected');
    assert.equal(harness.session.socketForSending, undefined);
  });
});

describe('Baileys engine: sending', () => {
  // The engine loads its auth state from the store itself, so these tests give it a fresh SQLite
  // file; no row is written, since the fake sockets never update the creds.
  let database: TestDatabase;
  let store: Store;
  const secretBox = new SecretBox(randomBytes(32));
  const engines: { engine: BaileysEngine; number: WhatsAppNumber }[] = [];

  before(async () => {
    database = await createTestDatabase('sqlite');
    store = openStore(loadConfig({ DATABASE_URL: database.url }).database);
    await migrateToLatest(store.db, store.dialect);
  });

  afterEach(async () => {
    for (const { engine, number } of engines.splice(0)) await engine.stop(number);
  });

  after(async () => {
    await store?.close();
    await database?.drop();
  });

  async function startEngine(minimumGapMs = 0) {
    const factory = new RecordingSocketFactory();
    const events = new RecordingEvents();
    const engine = new BaileysEngine({
      store,
      secretBox,
      events,
      logger: pino({ level: 'silent' }),
      pacing: { minimumGapMs, jitterMs: 0 },
      version: undefined,
      socketFactory: factory.create,
      timings: QUIET_TIMINGS,
    });
    const number = ourNumber();
    engines.push({ engine, number });
    // Linking opens the socket; start() alone would wait, since the number was never linked.
    await engine.link(number, UNFENCED_TEST_LEASE);
    return { engine, number, factory, events };
  }

  async function connect(engine: BaileysEngine, number: WhatsAppNumber, factory: RecordingSocketFactory): Promise<FakeSocket> {
    const socket = factory.latest;
    socket.openAs(OUR_DIGITS);
    await waitFor('the number is connected', () => engine.sessionStatus(number) === 'connected');
    return socket;
  }

  function refusedWith(failure: EngineSendFailure, sessionStatus?: SessionStatus) {
    return (error: unknown) => {
      assert.ok(error instanceof EngineSendError, `an EngineSendError, got ${String(error)}`);
      assert.equal(error.failure, failure);
      if (sessionStatus !== undefined) assert.equal(error.sessionStatus, sessionStatus);
      return true;
    };
  }

  it('does not open a socket at boot for a number that was never linked, and refuses its sends', async () => {
    const factory = new RecordingSocketFactory();
    const engine = new BaileysEngine({
      store,
      secretBox,
      events: new RecordingEvents(),
      logger: pino({ level: 'silent' }),
      pacing: { minimumGapMs: 0, jitterMs: 0 },
      version: undefined,
      socketFactory: factory.create,
      timings: QUIET_TIMINGS,
    });
    const number = ourNumber();
    engines.push({ engine, number });
    await engine.start(number, UNFENCED_TEST_LEASE);
    assert.equal(factory.sockets.length, 0, 'no socket, so no QR codes that nobody scans');
    await assert.rejects(engine.sendMessage(number, { toPhone: RECIPIENT, text: 'hi' }), refusedWith('not_connected', 'disconnected'));
  });

  it('a number that is not connected refuses the send with not_connected and its status', async () => {
    const { engine, number, factory } = await startEngine();
    await assert.rejects(engine.sendMessage(number, { toPhone: RECIPIENT, text: 'hi' }), refusedWith('not_connected', 'connecting'));
    assert.equal(factory.latest.sendCalls.length, 0);
  });

  it('a recipient without WhatsApp is refused, and the answer is remembered rather than asked again', async () => {
    const { engine, number, factory } = await startEngine();
    const socket = await connect(engine, number, factory);
    socket.answerOnWhatsApp = async (phones) => phones.map((phone) => ({ jid: `${phone}@s.whatsapp.net`, exists: false }));
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(engine.sendMessage(number, { toPhone: RECIPIENT, text: 'hi' }), refusedWith('recipient_not_on_whatsapp'));
    }
    assert.deepEqual(socket.onWhatsAppCalls, [[RECIPIENT.slice(1)]]);
    assert.equal(socket.sendCalls.length, 0);
  });

  it('checks many phones in one onWhatsApp query, by JID, and answers remembered phones without asking again', async () => {
    const { engine, number, factory } = await startEngine();
    const socket = await connect(engine, number, factory);
    // WhatsApp answers by JID, a device suffix included (which wa_id leaves out), and in its own order.
    socket.answerOnWhatsApp = async (phones) =>
      phones
        .map((phone) => ({
          jid: phone === '14155550111' ? '14155550111:3@s.whatsapp.net' : `${phone}@s.whatsapp.net`,
          exists: phone !== '14155550122',
        }))
        .reverse();
    const admitted: number[] = [];
    const first = await engine.checkNumbers(number, ['+14155550111' as E164, '+14155550122' as E164], (count) => admitted.push(count));
    assert.deepEqual(first, [
      { phone: '+14155550111', exists: true, waId: '14155550111@s.whatsapp.net', cached: false },
      { phone: '+14155550122', exists: false, waId: null, cached: false },
    ]);
    const second = await engine.checkNumbers(number, ['+14155550122' as E164, '+14155550133' as E164], (count) => admitted.push(count));
    assert.deepEqual(
      second.map((answer) => [answer.phone, answer.exists, answer.cached]),
      [
        ['+14155550122', false, true],
        ['+14155550133', true, false],
      ],
    );
    assert.deepEqual(
      socket.onWhatsAppCalls,
      [['14155550111', '14155550122'], ['14155550133']],
      'one query per check, for the phones not remembered',
    );
    assert.deepEqual(admitted, [2, 1], 'the lookup limit hears only what is asked');
    // A check warms the send path: a phone known not to use WhatsApp is refused without a query.
    await assert.rejects(
      engine.sendMessage(number, { toPhone: '+14155550122' as E164, text: 'hi' }),
      refusedWith('recipient_not_on_whatsapp'),
    );
    assert.equal(socket.onWhatsAppCalls.length, 2);
    const refusal = new Error('refused');
    await assert.rejects(
      engine.checkNumbers(number, ['+14155550144' as E164], () => {
        throw refusal;
      }),
      refusal,
    );
    assert.equal(socket.onWhatsAppCalls.length, 2, 'a refused check asks nothing');
  });

  it('typing goes to the chat as a presence update, and a session that is down refuses it', async () => {
    const { engine, number, factory } = await startEngine();
    await assert.rejects(engine.sendPresence(number, RECIPIENT, 'composing'), refusedWith('not_connected', 'connecting'));
    const socket = await connect(engine, number, factory);
    await engine.sendPresence(number, RECIPIENT, 'composing');
    await engine.sendPresence(number, RECIPIENT, 'paused');
    assert.deepEqual(socket.presenceCalls, [
      { type: 'composing', jid: `${RECIPIENT.slice(1)}@s.whatsapp.net` },
      { type: 'paused', jid: `${RECIPIENT.slice(1)}@s.whatsapp.net` },
    ]);
  });

  it("a send answers WhatsApp's id and keeps the message for Baileys' retry requests", async () => {
    const { engine, number, factory } = await startEngine();
    const socket = await connect(engine, number, factory);
    const sent = await engine.sendMessage(number, { toPhone: RECIPIENT, text: 'hello there' });
    assert.equal(sent.engineMessageId, '3EB0OUT1');
    assert.deepEqual(
      socket.sendCalls.map(({ jid, content }) => ({ jid, content })),
      [{ jid: `${RECIPIENT.slice(1)}@s.whatsapp.net`, content: { text: 'hello there' } }],
    );
    assert.equal(factory.options[0]?.getMessage('3EB0OUT1')?.conversation, 'hello there');
  });

  it('a 463 (account restricted) is not retried: the number is reported restricted, and its session stays up', async () => {
    const { engine, number, factory, events } = await startEngine();
    const socket = await connect(engine, number, factory);
    socket.answerSend = async () => {
      throw new Boom('account restricted', { statusCode: 463 });
    };
    await assert.rejects(engine.sendMessage(number, { toPhone: RECIPIENT, text: 'hi' }), refusedWith('restricted'));
    assert.equal(socket.sendCalls.length, 1, 'not retried');
    assert.equal(engine.sessionStatus(number), 'connected', 'receiving still works');
    assert.deepEqual(
      events.restrictions.map(({ reason, until }) => ({ reason, until })),
      [{ reason: 'restricted', until: null }],
    );
    assert.match(events.restrictions[0]!.detail ?? '', /463/);
    assert.equal(socket.timelockFetches, 1, 'WhatsApp is asked whether a time lock (with its lift time) is behind it');
  });

  it('rate-overlimit on a send is reported as a rate limit for the backoff window, and refused as before', async () => {
    const { engine, number, factory, events } = await startEngine();
    const socket = await connect(engine, number, factory);
    socket.answerSend = async () => {
      throw new Boom('rate-overlimit', { statusCode: 429 });
    };
    const before = Date.now();
    await assert.rejects(engine.sendMessage(number, { toPhone: RECIPIENT, text: 'hi' }), refusedWith('rate_limited'));
    const [restriction] = events.restrictions;
    assert.equal(restriction?.reason, 'rate_limited');
    const windowMs = restriction!.until!.getTime() - before;
    assert.ok(windowMs >= 60_000 && windowMs < 61_000, `paused for the 60 s backoff, not ${windowMs} ms`);
  });

  it('with pacing on, a burst of sends from one number is spaced by the minimum gap', async () => {
    const gapMs = 30;
    const { engine, number, factory } = await startEngine(gapMs);
    const socket = await connect(engine, number, factory);
    await Promise.all(['one', 'two', 'three'].map((text) => engine.sendMessage(number, { toPhone: RECIPIENT, text })));
    const times = socket.sendCalls.map((call) => call.at);
    assert.equal(times.length, 3);
    // Timers have a millisecond's grain, so each wait may end a millisecond short of its nominal gap.
    assert.ok(times[2]! - times[0]! >= 2 * gapMs - 2, `first to last send took ${times[2]! - times[0]!} ms`);
  });
});

describe('Baileys session: WhatsApp restricting the number', () => {
  it('reachoutTimeLock, as Baileys emits it, is reported with its lift time and enforcement, and its lifting too', async () => {
    const harness = await startSession({ linked: true });
    const socket = await connected(harness);
    const ends = new Date(Date.now() + 3_600_000);
    socket.emit('connection.update', {
      reachoutTimeLock: { isActive: true, timeEnforcementEnds: ends, enforcementType: ReachoutTimelockEnforcementType.BIZ_QUALITY },
    });
    await waitFor('the time lock is reported', () => harness.events.restrictions.length === 1);
    assert.deepEqual(
      harness.events.restrictions.map(({ reason, until, detail, phone }) => ({ reason, until, detail, phone })),
      [{ reason: 'reachout_timelock', until: ends, detail: 'BIZ_QUALITY', phone: OUR_PHONE }],
    );
    assert.equal(harness.session.status, 'connected', 'a time lock leaves the session up');
    socket.emit('connection.update', { reachoutTimeLock: { isActive: false, enforcementType: ReachoutTimelockEnforcementType.DEFAULT } });
    await waitFor('the lifting is reported', () => harness.events.lifts.length === 1);
  });

  it('a failed receipt with 463 reports the restriction, and the time lock WhatsApp then tells gives its lift time', async () => {
    const harness = await startSession({ linked: true });
    const socket = await connected(harness);
    const ends = new Date(Math.floor(Date.now() / 1000 + 7_200) * 1000);
    socket.reachoutTimelock = { isActive: true, timeEnforcementEnds: ends, enforcementType: ReachoutTimelockEnforcementType.DEFAULT };
    socket.emit('messages.update', [
      receiptUpdate('3EB0REFUSED', proto.WebMessageInfo.Status.ERROR, {
        messageStubParameters: ['463', 'Your account has been restricted'],
      }),
    ]);
    await waitFor('both are reported', () => harness.events.restrictions.length === 2);
    assert.deepEqual(
      harness.events.receipts.map(({ status, errorCode }) => ({ status, errorCode })),
      [{ status: 'failed', errorCode: '463' }],
    );
    assert.deepEqual(
      harness.events.restrictions.map(({ reason, until }) => ({ reason, until })),
      [
        { reason: 'restricted', until: null },
        { reason: 'reachout_timelock', until: ends },
      ],
    );
  });

  it('a failed receipt for any other reason restricts nothing', async () => {
    const harness = await startSession({ linked: true });
    const socket = await connected(harness);
    socket.emit('messages.update', [receiptUpdate('3EB0OTHER', proto.WebMessageInfo.Status.ERROR, { messageStubParameters: ['479'] })]);
    await waitFor('the receipt is reported', () => harness.events.receipts.length === 1);
    assert.deepEqual([harness.events.restrictions.length, socket.timelockFetches], [0, 0]);
  });

  it('a log-out is reported as a restriction with no lift time, after the status', async () => {
    const harness = await startSession({ linked: true });
    const socket = await connected(harness);
    socket.closeWith(401);
    await waitFor('the log-out is reported', () => harness.events.restrictions.length === 1);
    assert.equal(harness.session.status, 'logged_out');
    assert.deepEqual(
      harness.events.restrictions.map(({ reason, until }) => ({ reason, until })),
      [{ reason: 'logged_out', until: null }],
    );
  });
});

describe("Baileys session: WhatsApp's cap on new chats (ADR 0058)", () => {
  it('reads the quota on connect and again every quotaCheckIntervalMs while connected', async () => {
    const harness = await startSession({ linked: true, timings: { ...QUIET_TIMINGS, quotaCheckIntervalMs: 20 } });
    const socket = await connected(harness);
    socket.newChatCap = { total_quota: 30, used_quota: 4, cycle_end_timestamp: '1900000000' };
    await waitFor('read on connect, then on the timer', () =>
      harness.events.quotas.some((event) => event.kind === 'read' && event.quota.total === 30),
    );
    const read = harness.events.quotas.find((event) => event.kind === 'read' && event.quota.total === 30)!;
    assert.deepEqual(read.kind === 'read' && [read.quota.status, read.quota.used, read.quota.cycleEndsAt], [
      'none',
      4,
      new Date(1_900_000_000_000),
    ]);
    assert.equal(harness.events.quotas[0]!.kind, 'read', 'the first read came with the connection');
  });

  it('a failed receipt with 475 reports the cap and the receipt, then reads the quota again', async () => {
    const harness = await startSession({ linked: true });
    const socket = await connected(harness);
    await waitFor('the read on connect', () => harness.events.quotas.length === 1);
    socket.newChatCap = new Error('GraphQL server error: 500');
    socket.emit('messages.update', [receiptUpdate('3EB0CAPPED', proto.WebMessageInfo.Status.ERROR, { messageStubParameters: ['475'] })]);
    await waitFor(
      'the cap, the receipt and the read after',
      () => harness.events.quotas.length === 3 && harness.events.receipts.length === 1,
    );
    assert.deepEqual(
      harness.events.quotas.map((event) => (event.kind === 'read' ? `read ${event.quota.status} ${event.quota.error}` : event.kind)),
      ['read none null', 'capped', 'read unknown GraphQL server error: 500'],
    );
    assert.deepEqual(harness.events.restrictions, [], 'a cap pauses nothing: replies still go');
  });
});

describe('Baileys session: graceful shutdown', () => {
  it('saves the creds once more and ends the socket when the session stops', async () => {
    const harness = await startSession({ linked: true });
    const socket = await connected(harness);
    const savesBefore = harness.auth.saveCalls;
    await harness.session.stop();
    assert.equal(harness.auth.saveCalls, savesBefore + 1, 'the creds were flushed');
    assert.ok(socket.endCalls.length > 0, 'the socket was ended');
  });
});
