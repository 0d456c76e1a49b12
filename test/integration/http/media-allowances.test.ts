import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Readable } from 'node:stream';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';
import type { Json } from '../../support/json.ts';

const KIB = 1024;

/** A real file server that counts every request it is sent: what a refused send must never reach. */
function startCountingFileServer(): Promise<{ url: (size: number) => string; port: number; requests: () => number; close: () => void }> {
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests += 1;
    const size = Number(new URL(request.url ?? '/', 'http://files').searchParams.get('size') ?? 3000);
    response.writeHead(200, { 'content-type': 'application/pdf' }).end(samples.pdf(size));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      // A query per test keeps each fetch distinct, as separate files would be.
      let file = 0;
      resolve({
        port,
        url: (size) => `http://127.0.0.1:${port}/file-${++file}.pdf?size=${size}`,
        requests: () => requests,
        close: () => server.close(),
      });
    });
  });
}

/**
 * A request over a real socket, answered as inject answers: a 413 keeps the connection while
 * the rest of the body is discarded, which needs a real one.
 */
async function overHttp(test: TestGateway, path: string, apiKey: string, contentType: string, body: Buffer | string | Iterable<Buffer>) {
  if (test.app.server.address() === null) await test.app.listen({ port: 0, host: '127.0.0.1' });
  const address = test.app.server.address();
  return new Promise<{ statusCode: number; headers: http.IncomingHttpHeaders; body: string; json: () => Json }>((resolve, reject) => {
    const request = http.request(
      {
        port: (address as AddressInfo).port,
        host: '127.0.0.1',
        path,
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': contentType },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ statusCode: response.statusCode!, headers: response.headers, body: text, json: () => JSON.parse(text) });
        });
      },
    );
    request.on('error', reject);
    // A Buffer or string goes with its Content-Length; chunks go without one, as a stream would.
    if (typeof body === 'string' || Buffer.isBuffer(body)) request.end(body);
    else Readable.from(body).pipe(request);
  });
}

function upload(test: TestGateway, account: SeededAccount, body: Buffer | Iterable<Buffer>) {
  return overHttp(test, '/media', account.apiKey, 'application/pdf', body);
}

for (const dialect of dialects) {
  describe(`media by URL is fetched only after every check passes, and against a budget (${dialect})`, () => {
    let files: Awaited<ReturnType<typeof startCountingFileServer>>;
    let test: TestGateway;
    let account: SeededAccount;
    let stranger: SeededAccount;

    before(async () => {
      files = await startCountingFileServer();
      test = await startTestGateway(dialect, {
        WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${files.port}`,
        WAGW_SANDBOX_RECEIVES_PER_MINUTE: '2',
        // A day's window refills slowly enough that a test sees the budget as it left it.
        WAGW_MEDIA_BYTE_WINDOW_SECONDS: '86400',
        WAGW_MEDIA_FETCH_MIB_PER_WINDOW: 'starter:1,pro:4',
      });
      account = await seedAccount(test.gateway);
      stranger = await seedAccount(test.gateway);
    });

    after(async () => {
      await test?.close();
      files?.close();
    });

    const send = (from: string, url: string, key = account.apiKey) =>
      test.post('/send_message', { from_phone: from, to_phone: '+14155550100', message: 'from a URL', media: { url } }, key);

    it("a send from a phone the account does not own is refused without a single request to the file's host", async () => {
      const before = files.requests();
      for (const phone of [stranger.phones[0]!, uniquePhone()]) {
        const answer = await send(phone, files.url(600 * KIB));
        assert.equal(answer.statusCode, 403, answer.body);
        assert.equal(answer.json().error, 'phone_not_owned');
      }
      assert.equal(files.requests(), before, 'the host was never asked');
    });

    it('a send over the monthly quota, or from a number that is not connected, fetches nothing either', async () => {
      const spent = await seedAccount(test.gateway, { monthlyLimit: 1 });
      assert.equal(
        (await test.post('/send_message', { from_phone: spent.phones[0], to_phone: '+14155550100', message: 'the one' }, spent.apiKey))
          .statusCode,
        200,
      );
      const before = files.requests();
      const overQuota = await send(spent.phones[0]!, files.url(3000), spent.apiKey);
      assert.equal(overQuota.statusCode, 429, overQuota.body);
      assert.equal(overQuota.json().error, 'quota_exceeded');

      const paused = await seedAccount(test.gateway);
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), paused.phones[0]!, 'disconnected');
      const offline = await send(paused.phones[0]!, files.url(3000), paused.apiKey);
      assert.equal(offline.statusCode, 503, offline.body);
      assert.equal(offline.json().error, 'number_not_connected');
      assert.equal(files.requests(), before, 'the host was never asked');
    });

    it("POST /sandbox/receive checks its rate and the number's owner before fetching", async () => {
      const before = files.requests();
      const receive = (key: string, toPhone: string) =>
        test.post(
          '/sandbox/receive',
          { from_phone: '+14155550100', to_phone: toPhone, message: 'a file', media: { url: files.url(600 * KIB) } },
          key,
        );
      const foreign = await receive(stranger.apiKey, account.phones[0]!);
      assert.equal(foreign.statusCode, 403, foreign.body);
      assert.equal(foreign.json().error, 'phone_not_owned');
      assert.equal((await receive(stranger.apiKey, uniquePhone())).statusCode, 403);
      const limited = await receive(stranger.apiKey, stranger.phones[0]!);
      assert.equal(limited.statusCode, 429, limited.body);
      assert.equal(limited.json().error, 'rate_limited');
      assert.equal(files.requests(), before, 'the host was never asked');
    });

    it("fetched bytes count against the plan's budget, refused or not; past it, 429 with Retry-After before any request", async () => {
      const fresh = await seedAccount(test.gateway);
      const first = await send(fresh.phones[0]!, files.url(700 * KIB), fresh.apiKey);
      assert.equal(first.statusCode, 200, first.body);

      // 324 KiB of the 1 MiB budget are left: the fetch starts, and stops where the budget ends.
      const before = files.requests();
      const second = await send(fresh.phones[0]!, files.url(700 * KIB), fresh.apiKey);
      assert.equal(second.statusCode, 429, second.body);
      assert.equal(second.json().error, 'media_fetch_budget_exceeded');
      assert.equal(files.requests(), before + 1);

      const third = await send(fresh.phones[0]!, files.url(3000), fresh.apiKey);
      assert.equal(third.statusCode, 429, third.body);
      const { meta: details } = third.json();
      assert.deepEqual(
        { ...details, retry_after_seconds: undefined },
        { plan: 'starter', limit_bytes: 1024 * KIB, window_seconds: 86_400, retry_after_seconds: undefined },
      );
      assert.ok(details.retry_after_seconds > 1, 'the budget refills over the window');
      assert.equal(third.headers['retry-after'], String(details.retry_after_seconds));
      assert.equal(files.requests(), before + 1, 'a spent budget fetches nothing');

      // Another account's budget is its own, and a larger plan has a larger one.
      const pro = await seedAccount(test.gateway, { plan: 'pro' });
      for (let index = 0; index < 2; index++) assert.equal((await send(pro.phones[0]!, files.url(1200 * KIB), pro.apiKey)).statusCode, 200);
    });
  });

  describe(`uploads have a storage quota and a rate, by plan (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect, {
        WAGW_MEDIA_BYTE_WINDOW_SECONDS: '86400',
        WAGW_MEDIA_STORAGE_QUOTA_MIB: 'starter:1,pro:3',
        WAGW_MEDIA_UPLOAD_MIB_PER_WINDOW: 'starter:2,pro:2,enterprise:1',
      });
    });

    after(async () => {
      await test?.close();
    });

    it("an upload past the account's storage is 413 storage_quota_exceeded, with the figures", async () => {
      const account = await seedAccount(test.gateway);
      assert.equal((await upload(test, account, samples.pdf(600 * KIB))).statusCode, 201);
      const over = await upload(test, account, samples.pdf(601 * KIB));
      assert.equal(over.statusCode, 413, over.body);
      assert.equal(over.json().error, 'storage_quota_exceeded');
      assert.deepEqual(over.json().meta, { plan: 'starter', used_bytes: 600 * KIB, limit_bytes: 1024 * KIB });
      // A smaller file still fits, and a send's stored file counts too.
      assert.equal((await upload(test, account, samples.pdf(300 * KIB))).statusCode, 201);
      const sendBody = {
        from_phone: account.phones[0],
        to_phone: '+14155550100',
        message: 'x',
        media: { data: samples.pdf(200 * KIB).toString('base64') },
      };
      const send = await overHttp(test, '/send_message', account.apiKey, 'application/json', JSON.stringify(sendBody));
      assert.equal(send.statusCode, 413, send.body);
      assert.equal(send.json().error, 'storage_quota_exceeded');
      // Another account, and a larger plan, have room of their own.
      const pro = await seedAccount(test.gateway, { plan: 'pro' });
      assert.equal((await upload(test, pro, samples.pdf(1000 * KIB))).statusCode, 201);
      assert.equal((await upload(test, pro, samples.pdf(1001 * KIB))).statusCode, 201);
    });

    it('a file whose length is not announced is stopped where the quota ends', async () => {
      const account = await seedAccount(test.gateway);
      const file = samples.pdf(1100 * KIB);
      const chunks = (function* () {
        for (let offset = 0; offset < file.length; offset += 64 * KIB) yield file.subarray(offset, offset + 64 * KIB);
      })();
      const chunked = await upload(test, account, chunks);
      assert.equal(chunked.statusCode, 413, chunked.body);
      assert.equal(chunked.json().error, 'storage_quota_exceeded');
      const held = await test.gateway.store.db.selectFrom('media').select('id').where('account_id', '=', account.accountId).execute();
      assert.equal(held.length, 0, 'nothing was stored');
    });

    it("uploads past the plan's bytes per window are 429 upload_rate_exceeded with Retry-After", async () => {
      const account = await seedAccount(test.gateway, { plan: 'enterprise' });
      assert.equal((await upload(test, account, samples.pdf(700 * KIB))).statusCode, 201);
      const over = await upload(test, account, samples.pdf(700 * KIB + 1));
      assert.equal(over.statusCode, 429, over.body);
      assert.equal(over.json().error, 'upload_rate_exceeded');
      assert.deepEqual(
        { ...over.json().meta, retry_after_seconds: undefined },
        { plan: 'enterprise', limit_bytes: 1024 * KIB, window_seconds: 86_400, retry_after_seconds: undefined },
      );
      assert.equal(over.headers['retry-after'], String(over.json().meta.retry_after_seconds));
      assert.ok(over.json().meta.retry_after_seconds > 1);
    });
  });

  describe(`below the free-disk floor no file is written (${dialect})`, () => {
    let files: Awaited<ReturnType<typeof startCountingFileServer>>;
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      files = await startCountingFileServer();
      // A floor above any disk's free space: the gateway behaves as on a full disk.
      test = await startTestGateway(dialect, {
        WAGW_MEDIA_MIN_FREE_BYTES: String(Number.MAX_SAFE_INTEGER),
        WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${files.port}`,
      });
      account = await seedAccount(test.gateway);
    });

    after(async () => {
      await test?.close();
      files?.close();
    });

    it('an upload is 503 insufficient_storage with Retry-After, and a media.url is not fetched', async () => {
      const refused = await upload(test, account, samples.pdf(3000));
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().error, 'insufficient_storage');
      assert.equal(refused.headers['retry-after'], '60');
      const send = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', message: 'x', media: { url: files.url(3000) } },
        account.apiKey,
      );
      assert.equal(send.statusCode, 503, send.body);
      assert.equal(send.json().error, 'insufficient_storage');
      assert.equal(files.requests(), 0);
      // Messages without files still go: the database keeps the last space for them.
      assert.equal(
        (
          await test.post(
            '/send_message',
            { from_phone: account.phones[0], to_phone: '+14155550100', message: 'text still goes' },
            account.apiKey,
          )
        ).statusCode,
        200,
      );
    });

    it('an incoming file is not downloaded: its message is stored, and the file is tried again later', async () => {
      const answer = await test.post(
        '/sandbox/receive',
        {
          from_phone: uniquePhone(),
          to_phone: account.phones[0],
          message: 'a photo',
          media: { data: samples.jpeg(2500).toString('base64') },
          simulate_failed_downloads: 1,
        },
        account.apiKey,
      );
      assert.equal(answer.statusCode, 200, answer.body);
      const messageId = answer.json().message_id;
      const row = await test.gateway.store.db
        .selectFrom('messages')
        .select('media_id')
        .where('id', '=', messageId)
        .executeTakeFirstOrThrow();
      assert.equal(row.media_id, null, 'no file was stored');
      const pending = await test.gateway.store.db
        .selectFrom('media_downloads')
        .selectAll()
        .where('message_id', '=', messageId)
        .executeTakeFirst();
      assert.equal(pending?.last_reason, 'insufficient_storage');
    });
  });
}
