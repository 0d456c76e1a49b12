import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { blobStores } from '../../support/s3-server.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';

const PDF = samples.pdf(3000);

/** A real file server, standing in for the third party a send's media.url names. */
function startFileServer(routes: (port: number) => http.RequestListener): Promise<http.Server & { port: number }> {
  let port = 0;
  const server = http.createServer((request, response) => routes(port)(request, response));
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      port = (server.address() as AddressInfo).port;
      resolve(Object.assign(server, { port }));
    });
  });
}

for (const dialect of dialects) {
  for (const blobStore of blobStores) {
    describe(`media by URL, fetched through the address guard (${dialect}, ${blobStore})`, () => {
      let files: http.Server & { port: number };
      let elsewhere: http.Server & { port: number };
      let test: TestGateway;
      let account: SeededAccount;
      const open = new Set<http.ServerResponse>();

      before(async () => {
        // A second server on a port the guard does not allow: the target of a sneaky redirect.
        elsewhere = await startFileServer(() => (_request, response) => response.end(PDF));
        files = await startFileServer((port) => (request, response) => {
          switch (request.url) {
            case '/files/inv-1042.pdf':
              return response.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
            case '/download?id=7':
              return response
                .writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.pdf"' })
                .end(PDF);
            case '/table':
              return response.writeHead(200, { 'content-type': 'text/csv' }).end('a,b\n1,2\n');
            case '/moved':
              return response.writeHead(302, { location: `http://127.0.0.1:${port}/files/inv-1042.pdf` }).end();
            case '/to-loopback':
              return response.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/secret` }).end();
            case '/loop':
              return response.writeHead(302, { location: '/loop' }).end();
            case '/huge':
              return response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(200 * 1024 * 1024) }).end();
            case '/silent':
              open.add(response);
              return response.writeHead(200, { 'content-type': 'application/pdf' }).write(PDF.subarray(0, 100));
            case '/endless': {
              open.add(response);
              response.writeHead(200, { 'content-type': 'application/pdf' });
              const more = () => {
                while (response.write(PDF)) {
                  if (response.destroyed) return;
                }
                response.once('drain', more);
              };
              return more();
            }
            default:
              return response.writeHead(404).end('no such file');
          }
        });
        test = await startTestGateway(dialect, {
          WAGW_MEDIA_STORE: blobStore,
          WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${files.port}`,
          WAGW_MEDIA_FETCH_IDLE_TIMEOUT_MS: '300',
          WAGW_MEDIA_MAX_DOCUMENT_BYTES: String(64 * 1024),
        });
        account = await seedAccount(test.gateway);
      });

      after(async () => {
        for (const response of open) response.destroy();
        await test?.close();
        files?.close();
        elsewhere?.close();
      });

      const send = (url: string, extra: Record<string, unknown> = {}) =>
        test.post(
          '/send_message',
          { from_phone: account.phones[0], to_phone: '+14155550100', message: 'from a URL', media: { url, ...extra } },
          account.apiKey,
        );
      const base = () => `http://127.0.0.1:${files.port}`;

      it('a URL is fetched, sniffed and sent; its name comes from the path or Content-Disposition', async () => {
        const direct = await send(`${base()}/files/inv-1042.pdf`);
        assert.equal(direct.statusCode, 200, direct.body);
        assert.deepEqual(
          [direct.json().media.kind, direct.json().media.mime_type, direct.json().media.size, direct.json().media.filename],
          ['document', 'application/pdf', PDF.length, 'inv-1042.pdf'],
        );
        const disposition = await send(`${base()}/download?id=7`);
        assert.equal(disposition.json().media.filename, 'report.pdf');
        const named = await send(`${base()}/download?id=7`, { filename: 'mine.pdf' });
        assert.equal(named.json().media.filename, 'mine.pdf', "the caller's name wins");
        const table = await send(`${base()}/table`);
        assert.equal(table.json().media.mime_type, 'text/csv', "bytes without a signature take the upstream's type");
        const moved = await send(`${base()}/moved`);
        assert.equal(moved.statusCode, 200, 'a redirect to an allowed address is followed');
      });

      it('addresses the guard forbids are refused, directly or by a redirect, and nothing is fetched from them', async () => {
        for (const url of [
          'http://169.254.169.254/latest/meta-data',
          'http://10.0.0.1/x.pdf',
          `http://[::1]:${files.port}/files/inv-1042.pdf`,
          `http://127.0.0.1:${elsewhere.port}/x`,
          `${base()}/to-loopback`,
        ]) {
          const response = await send(url);
          assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
          assert.equal(response.json().error, 'media_url_blocked', url);
          assert.equal(response.json().meta.field, 'media.url');
        }
      });

      it('an unreachable, failing or endless upstream gets a specific answer', async () => {
        const missing = await send(`${base()}/nothing-here.pdf`);
        assert.deepEqual(
          [missing.statusCode, missing.json().error, missing.json().meta.reason, missing.json().meta.upstream_status],
          [422, 'media_url_unreachable', 'status', 404],
        );
        const loop = await send(`${base()}/loop`);
        assert.equal(loop.json().error, 'media_url_unreachable');
        const nowhere = await send('http://no-such-host.invalid/file.pdf');
        assert.deepEqual([nowhere.json().error, nowhere.json().meta.reason], ['media_url_unreachable', 'dns']);
        const silent = await send(`${base()}/silent`);
        assert.deepEqual([silent.statusCode, silent.json().meta.reason], [422, 'idle_timeout']);
        const endless = await send(`${base()}/endless`);
        assert.deepEqual(
          [endless.statusCode, endless.json().error, endless.json().meta],
          [400, 'media_too_large', { kind: 'document', limit_bytes: 64 * 1024 }],
        );
        const huge = await send(`${base()}/huge`);
        assert.deepEqual([huge.json().error, huge.json().meta.kind], ['media_too_large', 'any']);
        for (const url of ['ftp://example.com/x.pdf', 'not a url', 'http://user:pass@example.com/x.pdf']) {
          const refused = await send(url);
          assert.deepEqual([refused.statusCode, refused.json().error, refused.json().meta.field], [400, 'invalid_media', 'media.url'], url);
        }
      });
    });
  }
}
