import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { deriveSandboxNetworkKey, handshakeProof, newNonce } from '../../../../src/engines/sandbox/sandbox-network-handshake.ts';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import type { NetworkMessage } from '../../../../src/engines/sandbox/sandbox-network.ts';
import { serveTestNetwork, TEST_LINE_BYTES, TEST_NETWORK_KEY, testNetworkClient } from '../../../support/shared-network.ts';
import { ignoreCutOff } from '../../../support/ignore.ts';

const NUMBER = '+447700900821';
const CUSTOMER = '+14155550121';
const WRONG_KEY = deriveSandboxNetworkKey(Buffer.alloc(32, 1));

/** A raw socket to the network, with everything it was told, and its end. */
async function rawPeer(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port });
  let heard = '';
  socket.on('data', (chunk: Buffer) => {
    heard += chunk.toString('utf8');
  });
  socket.on('error', ignoreCutOff);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const nextLine = async (index: number) => {
    const complete = () => heard.split('\n').slice(0, -1);
    for (let tries = 0; tries < 200 && complete().length <= index; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    return JSON.parse(complete()[index]!) as Record<string, unknown>;
  };
  const send = (message: object) => socket.write(`${JSON.stringify(message)}\n`);
  return { socket, heard: () => heard, closed, nextLine, send };
}

/** A raw socket that has passed the handshake with `key`. */
async function admittedPeer(port: number, key: Buffer) {
  const peer = await rawPeer(port);
  const challenge = String((await peer.nextLine(0)).nonce);
  const nonce = newNonce();
  peer.send({ op: 'hello', nonce, proof: handshakeProof(key, 'node', challenge, nonce) });
  assert.equal((await peer.nextLine(1)).op, 'welcome');
  return peer;
}

/** Writes one line of `totalBytes` without its end, as fast as the socket takes it; answers how much went out before the peer closed. */
async function flood(socket: net.Socket, totalBytes: number): Promise<{ written: number; closedEarly: boolean }> {
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  let written = 0;
  while (written < totalBytes && !socket.destroyed && socket.writable) {
    written += chunk.length;
    if (!socket.write(chunk)) {
      await Promise.race([
        new Promise((resolve) => socket.once('drain', resolve)),
        new Promise((resolve) => socket.once('close', resolve)),
      ]);
    }
  }
  const closedEarly = await Promise.race([
    new Promise<boolean>((resolve) => (socket.destroyed ? resolve(true) : socket.once('close', () => resolve(true)))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000)),
  ]);
  return { written, closedEarly };
}

// The shared sandbox network hears only nodes that prove they hold the cluster's WAGW_SECRET_KEY:
// anyone else who reaches its port can neither read the journal, nor simulate messages, nor manage
// groups, nor take a number's connection, and no peer can make it buffer a line without end.
describe('the shared sandbox network admits only nodes that hold the key', () => {
  let shared: Awaited<ReturnType<typeof serveTestNetwork>>;
  let node: RemoteSandboxNetwork;
  const received: NetworkMessage[] = [];

  before(async () => {
    shared = await serveTestNetwork();
    node = testNetworkClient(shared.port);
    await node.connect(NUMBER, 'node-a', {
      incoming: async (message) => void received.push(message),
      receipt: () => undefined,
      replaced: () => undefined,
    });
    await node.inject(CUSTOMER, NUMBER, 'a private message');
  });

  after(async () => {
    node?.close();
    await shared?.close();
  });

  it('a peer that speaks without the handshake hears nothing but the challenge and is closed', async () => {
    const peer = await rawPeer(shared.port);
    peer.send({ op: 'journal', ref: 1 });
    peer.send({ op: 'inject', ref: 2, from: CUSTOMER, to: NUMBER, text: 'forged' });
    peer.send({ op: 'connect', ref: 3, phone: NUMBER, node: 'intruder' });
    peer.send({ op: 'group_create', ref: 4, phone: NUMBER, subject: 'Forged', participants: [CUSTOMER] });
    await peer.closed;
    const lines = peer
      .heard()
      .split('\n')
      .filter((line) => line !== '');
    assert.equal(lines.length, 1, `it heard only the challenge: ${peer.heard().slice(0, 300)}`);
    assert.equal(JSON.parse(lines[0]!).op, 'challenge');
    assert.ok(!peer.heard().includes('a private message'));
  });

  it('a proof made with another key, or one replayed from an earlier challenge, closes the socket without a welcome', async () => {
    const wrong = await rawPeer(shared.port);
    const challenge = String((await wrong.nextLine(0)).nonce);
    const nonce = newNonce();
    wrong.send({ op: 'hello', nonce, proof: handshakeProof(WRONG_KEY, 'node', challenge, nonce) });
    await wrong.closed;
    assert.equal(
      wrong
        .heard()
        .split('\n')
        .filter((line) => line !== '').length,
      1,
    );

    const replayed = await rawPeer(shared.port);
    await replayed.nextLine(0);
    replayed.send({ op: 'hello', nonce, proof: handshakeProof(TEST_NETWORK_KEY, 'node', challenge, nonce) });
    await replayed.closed;
    assert.equal(
      replayed
        .heard()
        .split('\n')
        .filter((line) => line !== '').length,
      1,
    );
  });

  it('a node with the wrong key cannot read the journal, inject, manage groups or connect as a number, and is told why', async () => {
    // A client of its own for each attempt, so that each makes its own handshake, and side by
    // side: a refused handshake holds its client for the 0.5 s redial pause before it answers.
    const reader = testNetworkClient(shared.port, WRONG_KEY);
    const injector = testNetworkClient(shared.port, WRONG_KEY);
    const groupMaker = testNetworkClient(shared.port, WRONG_KEY);
    const connector = testNetworkClient(shared.port, WRONG_KEY);
    try {
      await Promise.all([
        assert.rejects(reader.journal(), /WAGW_SECRET_KEY/),
        assert.rejects(injector.inject(CUSTOMER, NUMBER, 'forged')),
        assert.rejects(groupMaker.createGroup(NUMBER, 'Forged', [CUSTOMER])),
        assert.rejects(
          connector.connect(NUMBER, 'intruder', { incoming: async () => undefined, receipt: () => undefined, replaced: () => undefined }),
        ),
      ]);
    } finally {
      for (const intruder of [reader, injector, groupMaker, connector]) intruder.close();
    }
    const journal = await node.journal();
    assert.ok(!journal.some((entry) => entry.node === 'intruder' || entry.text === 'forged'), 'nothing the intruder asked for happened');
    assert.deepEqual(await node.groupsOf(NUMBER), []);
    // The number's own connection still holds: its messages still reach it.
    await node.inject(CUSTOMER, NUMBER, 'still mine');
    assert.ok(received.some((message) => message.text === 'still mine'));
  });

  it('a line longer than a handshake needs closes an unproven socket long before it is all sent', async () => {
    const peer = await rawPeer(shared.port);
    const { written, closedEarly } = await flood(peer.socket, 256 * 1024 * 1024);
    assert.ok(closedEarly, 'the network closed the socket');
    assert.ok(written < 32 * 1024 * 1024, `the network stopped reading after ${written} bytes`);
  });

  it("a proven node's line past the limit closes its socket too, and the network serves others after it", async () => {
    const peer = await admittedPeer(shared.port, TEST_NETWORK_KEY);
    const { written, closedEarly } = await flood(peer.socket, 256 * 1024 * 1024);
    assert.ok(closedEarly, 'the network closed the socket');
    assert.ok(written < TEST_LINE_BYTES + 32 * 1024 * 1024, `the network stopped reading after ${written} bytes`);
    await node.inject(CUSTOMER, NUMBER, 'after the flood');
    assert.ok(received.some((message) => message.text === 'after the flood'));
  });
});
