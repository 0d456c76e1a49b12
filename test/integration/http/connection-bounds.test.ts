import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { boundConnectionsPerAddress, connectionGroups } from '../../../src/http/connection-bounds.ts';

const BOUNDS = { perAddress: 2, perIpv6Site: 3 };

/** Stands in for a net.Socket: the bound reads only its address, destroys it, and waits for close. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function boundedServer() {
  const server = new EventEmitter();
  boundConnectionsPerAddress(server as unknown as Server, BOUNDS, pino({ level: 'silent' }));
  return (address: string) => {
    const socket = new FakeSocket(address);
    server.emit('connection', socket);
    return socket;
  };
}

describe('per-address connection bounds', () => {
  it('IPv6 is counted per /64 and per /48; IPv4, mapped or not, per address', () => {
    assert.deepEqual(
      connectionGroups('2001:db8:1:2::1', BOUNDS).map((group) => group.key),
      ['v6:2001:db8:1:2::/64', 'v6:2001:db8:1::/48'],
    );
    assert.deepEqual(connectionGroups('::ffff:203.0.113.7', BOUNDS), connectionGroups('203.0.113.7', BOUNDS));
  });

  it('rotating through /64s of one /48 gains nothing past the /48 bound, and another /48 is served', () => {
    const connect = boundedServer();
    const accepted = ['2001:db8:1:1::1', '2001:db8:1:2::1', '2001:db8:1:3::1'].map(connect);
    assert.ok(accepted.every((socket) => !socket.destroyed));
    assert.equal(connect('2001:db8:1:4::1').destroyed, true, 'a fourth /64 of the same /48 is refused');
    assert.equal(connect('2001:db8:2:1::1').destroyed, false, 'another /48 is served');
    accepted[0]!.emit('close');
    assert.equal(connect('2001:db8:1:4::1').destroyed, false, 'a closed socket frees its place in the /48');
  });

  it('one /64 is still held to the per-address bound', () => {
    const connect = boundedServer();
    assert.equal(connect('2001:db8:9:9::1').destroyed, false);
    assert.equal(connect('2001:db8:9:9::2').destroyed, false);
    assert.equal(connect('2001:db8:9:9::3').destroyed, true);
  });
});
