import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { samples } from '../../support/media-samples.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const password = 'correct horse battery';
const FILE_BYTES = 16 * 1024 * 1024 - 1;
/** What a refused post has sent when the answer must already be there: the fields and a sliver of the file. */
const FILE_BYTES_SENT_BEFORE_ANSWER = 256 * 1024;

interface InFlightAnswer {
  statusLine: string;
  /** Bytes of the body the client had written when the answer came, and the whole body's. */
  bodyBytesSent: number;
  bodyBytes: number;
}

/**
 * Posts the simulate form over a socket of its own with a 16 MiB file, sends the fields and only
 * the first 256 KiB of the file, and waits for the answer: a post refused before its file is
 * read is answered while the rest of the file has not been sent.
 */
function postWhileFileInFlight(
  port: number,
  path: string,
  cookie: string,
  fields: [string, string][],
  fileFirst = false,
): Promise<InFlightAnswer> {
  const boundary = '----wagw-test-boundary';
  const field = ([name, value]: [string, string]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const fileHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const fieldsText = fields.map(field).join('');
  const bodyBytes = Buffer.byteLength(fieldsText) + Buffer.byteLength(fileHead) + FILE_BYTES + Buffer.byteLength(tail);
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${bodyBytes}\r\n\r\n`;
  const sliver = samples.pdf(FILE_BYTES_SENT_BEFORE_ANSWER);
  const start = fileFirst ? Buffer.from(fileHead) : Buffer.from(fieldsText + fileHead);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s while the file was still being sent')));
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (!answer.includes('\r\n')) return;
      socket.destroy();
      resolve({ statusLine: answer.slice(0, answer.indexOf('\r\n')), bodyBytesSent: start.length + sliver.length, bodyBytes });
    });
    socket.write(head);
    socket.write(Buffer.concat([start, sliver]));
  });
}

for (const dialect of dialects) {
  describe(`the simulate form refuses a post before reading its file (${dialect})`, () => {
    let test: TestGateway;
    let port: number;
    let accountId: string;
    let own: WhatsAppNumber;
    let client: DashboardClient;
    /** A user of another account, whose posts to Acme's number must spend nothing of Acme's. */
    let intruder: DashboardClient;

    const cookie = (of = client) => of.cookieHeader().cookie!;
    const stored = async (fromPhone: string) =>
      (await test.gateway.history.page(accountScope(accountId), { phone: fromPhone, limit: 10 })).messages.length;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_SANDBOX_RECEIVES_PER_MINUTE: '2' });
      await test.app.listen({ host: '127.0.0.1', port: 0 });
      port = (test.app.server.address() as net.AddressInfo).port;
      accountId = (await test.gateway.accounts.createAccount({ name: 'Acme', plan: 'pro' })).id;
      const otherId = (await test.gateway.accounts.createAccount({ name: 'Globex', plan: 'pro' })).id;
      await createTestUser(test.gateway, { accountId, email: 'owner@acme.test', password, role: 'owner' });
      await createTestUser(test.gateway, { accountId: otherId, email: 'owner@globex.test', password, role: 'owner' });
      own = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: '+447700900301' });
      await test.gateway.numbers.addNumber(operatorScope(), { accountId: otherId, phone: '+447700900302' });
      client = new DashboardClient(test);
      assert.equal((await client.signIn('owner@acme.test', password)).statusCode, 303);
      await client.get('/numbers');
      intruder = new DashboardClient(test);
      assert.equal((await intruder.signIn('owner@globex.test', password)).statusCode, 303);
      await intruder.get('/numbers');
    });
    after(() => test.close());

    it('a forged token, or none before the file, is answered 403 while the file is still arriving', async () => {
      const forged = await postWhileFileInFlight(port, `/numbers/${own.id}/simulate`, cookie(), [
        ['_csrf', 'forged-token'],
        ['from_phone', '+447700900311'],
        ['message', 'x'],
      ]);
      assert.match(forged.statusLine, /^HTTP\/1\.1 403 /);
      assert.ok(forged.bodyBytesSent < forged.bodyBytes / 32, `answered after ${forged.bodyBytesSent} of ${forged.bodyBytes} bytes`);
      const fileFirst = await postWhileFileInFlight(port, `/numbers/${own.id}/simulate`, cookie(), [], true);
      assert.match(fileFirst.statusLine, /^HTTP\/1\.1 403 /, 'the token must come before the file');
      assert.equal(await stored('+447700900311'), 0);
    });

    it("another account's number is answered 404 before its file is read", async () => {
      const answer = await postWhileFileInFlight(port, `/numbers/${own.id}/simulate`, cookie(intruder), [
        ['_csrf', intruder.csrfToken!],
        ['from_phone', '+447700900312'],
        ['message', 'x'],
      ]);
      assert.match(answer.statusLine, /^HTTP\/1\.1 404 /);
      assert.equal(await stored('+447700900312'), 0);
    });

    it('a form posted over a real connection still arrives with its file, and past the rate the next is answered 429 before its file is read', async () => {
      for (const fromPhone of ['+447700900313', '+447700900314']) {
        const form = new FormData();
        form.append('_csrf', client.csrfToken!);
        form.append('from_phone', fromPhone);
        form.append('message', 'a photo');
        form.append('file', new Blob([samples.png], { type: 'image/png' }), 'photo.png');
        const response = await fetch(`http://127.0.0.1:${port}/numbers/${own.id}/simulate`, {
          method: 'POST',
          body: form,
          headers: { cookie: cookie() },
          redirect: 'manual',
        });
        assert.equal(response.status, 303, await response.text());
        assert.equal(await stored(fromPhone), 1);
      }
      const limited = await postWhileFileInFlight(port, `/numbers/${own.id}/simulate`, cookie(), [
        ['_csrf', client.csrfToken!],
        ['from_phone', '+447700900315'],
        ['message', 'x'],
      ]);
      assert.match(limited.statusLine, /^HTTP\/1\.1 429 /);
      assert.equal(await stored('+447700900315'), 0);
    });
  });
}
