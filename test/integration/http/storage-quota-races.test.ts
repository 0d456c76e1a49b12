import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';
import { waitUntil } from '../../support/waiting.ts';

const KIB = 1024;

/** An upload over a real socket whose body the test sends when it chooses, without a Content-Length. */
function openUpload(port: number, apiKey: string) {
  const request = http.request({
    port,
    host: '127.0.0.1',
    path: '/media',
    method: 'POST',
    agent: false,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/pdf' },
  });
  const answer = new Promise<{ statusCode: number; body: string }>((resolve, reject) => {
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ statusCode: response.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    request.on('error', reject);
  });
  return { write: (bytes: Buffer) => request.write(bytes), end: () => request.end(), answer: () => answer };
}

// Issue 38 item 7(a): the quota was checked when an upload started, against the files stored then,
// so uploads opened together and finished one after another each passed (a starter account held
// 721 MiB on 512). The row of a counted file is now written only if the account's files with it
// are within the quota at that moment, counted under the account's lock.
for (const dialect of dialects) {
  describe(`uploads opened together cannot hold more than the storage quota (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let port: number;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_MEDIA_STORAGE_QUOTA_MIB: 'starter:1' });
      account = await seedAccount(test.gateway);
      await test.app.listen({ port: 0, host: '127.0.0.1' });
      port = (test.app.server.address() as AddressInfo).port;
    });

    after(() => test?.close());

    it('three slow 600 KiB uploads of a 1 MiB account, all started before any ends: the first is stored, the others 413', async () => {
      const files = [1, 2, 3].map((index) => samples.pdf(600 * KIB - index));
      const uploads = files.map(() => openUpload(port, account.apiKey));
      // Each upload sends its first 64 KiB and is under way (its bytes spooled) before any ends.
      const incoming = path.join(test.gateway.config.media.directory, '.incoming');
      for (const [index, upload] of uploads.entries()) upload.write(files[index]!.subarray(0, 64 * KIB));
      await waitUntil(
        () => fs.existsSync(incoming) && fs.readdirSync(incoming).length === 3,
        'three uploads under way, each with its spool file',
      );
      const statuses: number[] = [];
      for (const [index, upload] of uploads.entries()) {
        upload.write(files[index]!.subarray(64 * KIB));
        upload.end();
        const answer = await upload.answer();
        statuses.push(answer.statusCode);
        if (answer.statusCode !== 201) assert.equal(JSON.parse(answer.body).error, 'storage_quota_exceeded', answer.body);
      }
      assert.deepEqual(statuses, [201, 413, 413]);
      const held = await test.gateway.store.db.selectFrom('media').select('size').where('account_id', '=', account.accountId).execute();
      assert.deepEqual(
        held.map((row) => Number(row.size)),
        [files[0]!.length],
      );
    });
  });
}
