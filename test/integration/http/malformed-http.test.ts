import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/** Writes raw bytes to the server and collects everything it answers until it closes. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

for (const dialect of dialects) {
  describe(`requests too malformed to reach a route (${dialect})`, () => {
    let test: TestGateway;
    let port: number;

    before(async () => {
      test = await startTestGateway(dialect);
      await test.app.listen({ host: '127.0.0.1', port: 0 });
      port = (test.app.server.address() as net.AddressInfo).port;
    });
    after(() => test.close());

    it('a request that is not HTTP gets 400 in the documented envelope', async () => {
      const answer = await exchange(port, 'NOT HTTP AT ALL\r\n\r\n');
      assert.match(answer, /^HTTP\/1\.1 400 /);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(body.error, 'invalid_request');
      assert.equal(typeof body.message, 'string');
    });

    it("headers over the server's limit get 400 in the envelope, naming the headers", async () => {
      const answer = await exchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.match(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).message, /headers are too large/);
    });
  });
}
