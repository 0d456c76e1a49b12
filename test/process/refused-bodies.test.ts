import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../support/databases.ts';
import { startListeningGateway, type ListeningGateway } from './listening-gateway.ts';
import { jsonPostHead, RawHttpConnection, sleep } from './raw-http.ts';

const TRIES = 100;
const OVERSIZED_BYTES = 4 * 1024 * 1024;

function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('curl', args, { encoding: 'utf8', maxBuffer: 1 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    ),
  );
}

for (const dialect of dialects) {
  describe(`a body over the limit always gets its 413 (${dialect})`, () => {
    let test: ListeningGateway;
    let bodyFile: string;
    let body: Buffer;

    before(async () => {
      test = await startListeningGateway(dialect);
      body = Buffer.from(
        JSON.stringify({ from_phone: test.sender.phones[0], to_phone: '+14155550100', message: 'x'.repeat(OVERSIZED_BYTES) }),
      );
      bodyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-413-')), 'big.json');
      fs.writeFileSync(bodyFile, body);
    });
    after(() => test?.close());

    it(`curl, ${TRIES} times, reads the JSON 413 every time`, async () => {
      const url = `http://127.0.0.1:${test.port}/send_message`;
      const outcomes = new Map<string, number>();
      for (let attempt = 0; attempt < TRIES; attempt++) {
        const run = await curl([
          '-sS',
          '-w',
          '\n%{http_code}',
          '-H',
          `Authorization: Bearer ${test.sender.apiKey}`,
          '-H',
          'Content-Type: application/json',
          '--data-binary',
          `@${bodyFile}`,
          url,
        ]);
        const outcome =
          run.code === 0 && run.stdout.endsWith('\n413') && run.stdout.includes('"error":"payload_too_large"')
            ? '413'
            : `curl ${run.code}: ${run.stderr.trim()}`;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      assert.deepEqual([...outcomes], [['413', TRIES]]);
    });

    it(`Node's fetch (undici), ${TRIES} times, reads the JSON 413 every time`, async () => {
      const outcomes = new Map<string, number>();
      for (let attempt = 0; attempt < TRIES; attempt++) {
        let outcome: string;
        try {
          const response = await fetch(`http://127.0.0.1:${test.port}/send_message`, {
            method: 'POST',
            headers: { authorization: `Bearer ${test.sender.apiKey}`, 'content-type': 'application/json' },
            body,
          });
          const answer = (await response.json()) as { error: string };
          outcome = `${response.status} ${answer.error}`;
        } catch (error) {
          outcome = `failed: ${String((error as { cause?: { code?: string } }).cause?.code ?? error)}`;
        }
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      assert.deepEqual([...outcomes], [['413 payload_too_large', TRIES]]);
    });

    it('after the 413 the server keeps reading the rest of the body instead of resetting the connection', async () => {
      const connection = await RawHttpConnection.open(test.port);
      try {
        await connection.write(jsonPostHead(test.port, '/send_message', body, test.sender.apiKey));
        const refusal = await connection.nextResponse(5_000);
        assert.equal(refusal.statusCode, 413);
        assert.equal(JSON.parse(refusal.body).error, 'payload_too_large');
        // The client goes on sending, as most do; every piece is accepted, none meets a reset.
        for (let offset = 0; offset < 2 * 1024 * 1024; offset += 64 * 1024) {
          await connection.write(body.subarray(offset, offset + 64 * 1024));
          await sleep(5);
        }
        assert.equal(connection.error, undefined, 'no reset while the body was still arriving');
        assert.equal(connection.isClosed, false);
      } finally {
        connection.close();
      }
    });

    it('Expect: 100-continue gets the final 413 or 401 at once, not a 100, when the headers already decide; a good request still gets its 100', async () => {
      const expect = ['Expect: 100-continue'];
      const small = Buffer.from(JSON.stringify({ from_phone: test.sender.phones[0], to_phone: '+14155550100', message: 'hello' }));
      const cases = [
        { head: jsonPostHead(test.port, '/send_message', body, test.sender.apiKey, expect), first: 413 },
        {
          head: jsonPostHead(test.port, '/send_message', small, test.sender.apiKey, expect).replace(/Authorization: [^\r]*\r\n/, ''),
          first: 401,
        },
        { head: jsonPostHead(test.port, '/send_message', small, test.sender.apiKey, expect), first: 100 },
      ];
      for (const { head, first } of cases) {
        const connection = await RawHttpConnection.open(test.port);
        try {
          await connection.write(head);
          const response = await connection.nextResponse(5_000);
          assert.equal(response.statusCode, first, head.split('\r\n')[0]);
          if (first === 100) {
            await connection.write(small);
            assert.equal((await connection.nextResponse(5_000)).statusCode, 200);
          } else {
            assert.ok(['payload_too_large', 'missing_api_key'].includes(JSON.parse(response.body).error));
          }
        } finally {
          connection.close();
        }
      }
    });

    it("Expect: 100-continue without a key gets its 401 at once on every operation's path, those with parameters and under /api included", async () => {
      const small = Buffer.from(JSON.stringify({ message: 'hello' }));
      for (const path of ['/messages/msg_unknown/edit', '/api/groups/120363041234567890@g.us/leave', '/api/typing']) {
        const connection = await RawHttpConnection.open(test.port);
        try {
          await connection.write(
            jsonPostHead(test.port, path, small, test.sender.apiKey, ['Expect: 100-continue']).replace(/Authorization: [^\r]*\r\n/, ''),
          );
          const response = await connection.nextResponse(5_000);
          assert.equal(response.statusCode, 401, path);
          assert.equal(JSON.parse(response.body).error, 'missing_api_key', path);
        } finally {
          connection.close();
        }
      }
    });
  });
}
