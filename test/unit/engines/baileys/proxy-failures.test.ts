import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseProxyUrl } from '../../../../src/domain/proxy-url.ts';
import { PROXY_ANSWER, proxyFailureOf } from '../../../../src/engines/baileys/proxy-failures.ts';
import { decideReconnect } from '../../../../src/engines/baileys/reconnect-policy.ts';

const proxy = { host: 'proxy.example', port: 3128 };
/** How Baileys hands on a websocket error: a Boom whose data is the error itself. */
const boomOf = (error: object) => ({ message: 'WebSocket Error', output: { statusCode: 500 }, data: error });

describe('a proxy URL as the operator writes it (ADR 0063)', () => {
  it('keeps scheme, host and port, and shows credentials only as ***', () => {
    const parsed = parseProxyUrl(' socks5h://user:p%40ss@proxy.example:1080 ');
    assert.deepEqual(parsed, {
      scheme: 'socks5h',
      host: 'proxy.example',
      port: 1080,
      href: 'socks5h://user:p%40ss@proxy.example:1080',
      redacted: 'socks5h://***@proxy.example:1080',
    });
    assert.equal(parseProxyUrl('http://proxy:80').port, 80, "a port that is the scheme's default is kept as written");
    assert.equal(parseProxyUrl('https://[::1]:8443/').redacted, 'https://[::1]:8443');
  });

  it('refuses another scheme, a missing port, a path, a password without a user, and never echoes the URL', () => {
    for (const raw of [
      'ftp://h:21',
      'socks4://h:1080',
      'http://h',
      'http://h:0',
      'http://h:1/path',
      'http://h:1?q=1',
      'socks5://:secret@h:1',
      'secret',
      '',
    ]) {
      assert.throws(
        () => parseProxyUrl(raw),
        (error: Error & { code?: string }) =>
          error.code === 'invalid_request' && !(raw.includes('secret') && error.message.includes('secret')),
        raw,
      );
    }
  });
});

describe("what a closed connection says of the number's proxy", () => {
  it('names a 407 as refused credentials, and another status as a refused tunnel', () => {
    assert.deepEqual(proxyFailureOf({ message: 'x', [PROXY_ANSWER]: 407 }, proxy), { kind: 'credentials', detail: 'HTTP 407' });
    assert.deepEqual(proxyFailureOf({ message: 'x', [PROXY_ANSWER]: 502 }, proxy), { kind: 'refused', detail: 'HTTP 502' });
  });

  it('tells a socket to the proxy that failed from one to WhatsApp that did', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:3128'), { code: 'ECONNREFUSED', port: 3128 });
    assert.deepEqual(proxyFailureOf(boomOf(refused), proxy), { kind: 'unreachable', detail: 'ECONNREFUSED' });
    const unknownHost = Object.assign(new Error('getaddrinfo ENOTFOUND proxy.example'), { code: 'ENOTFOUND', hostname: 'proxy.example' });
    assert.equal(proxyFailureOf(boomOf(unknownHost), proxy)?.kind, 'unreachable');
    const whatsapp = Object.assign(new Error('getaddrinfo ENOTFOUND web.whatsapp.com'), {
      code: 'ENOTFOUND',
      hostname: 'web.whatsapp.com',
    });
    assert.equal(proxyFailureOf(boomOf(whatsapp), proxy), undefined);
    assert.equal(proxyFailureOf({ message: 'Connection Terminated', output: { statusCode: 428 } }, proxy), undefined);
  });

  it("reads the SOCKS client's errors", () => {
    const socks = (message: string) => boomOf(Object.assign(new Error(message), { options: {} }));
    assert.equal(proxyFailureOf(socks('Socks5 Authentication failed'), proxy)?.kind, 'credentials');
    assert.equal(proxyFailureOf(socks('Socks5 proxy rejected connection - HostUnreachable'), proxy)?.kind, 'refused');
    assert.equal(proxyFailureOf(socks('connect ECONNREFUSED 127.0.0.1:1080'), proxy)?.kind, 'unreachable');
    assert.equal(proxyFailureOf(socks('Proxy connection timed out'), proxy)?.kind, 'unreachable');
  });

  it('gives up at once on credentials, and after maxProxyFailures on an unreachable proxy', () => {
    const options = { baseDelayMs: 1_000, maxDelayMs: 60_000, jitterRatio: 0, maxConsecutiveFailures: 10, maxProxyFailures: 3 };
    const facts = (kind: 'credentials' | 'unreachable', consecutiveFailures: number) => ({
      statusCode: 500,
      linking: false,
      consecutiveFailures,
      proxy: { redacted: 'http://***@proxy.example:3128', failure: { kind, detail: kind === 'credentials' ? 'HTTP 407' : 'ECONNREFUSED' } },
    });
    assert.equal(decideReconnect(facts('credentials', 0), options).action, 'give_up');
    assert.deepEqual(decideReconnect(facts('unreachable', 0), options), {
      action: 'retry',
      delayMs: 1_000,
      reason: 'the proxy http://***@proxy.example:3128 cannot be reached (ECONNREFUSED)',
    });
    assert.equal(decideReconnect(facts('unreachable', 1), options).action, 'retry');
    assert.equal(decideReconnect(facts('unreachable', 2), options).action, 'give_up');
  });
});
