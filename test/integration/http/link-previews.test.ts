import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parsePageMeta } from '../../../src/media/link-previews.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

function startSite(routes: http.RequestListener): Promise<http.Server & { port: number }> {
  const server = http.createServer(routes);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(Object.assign(server, { port: (server.address() as AddressInfo).port }))),
  );
}

describe("a page's preview tags are read by an HTML parser", () => {
  it('takes Open Graph first, decodes entities, ignores comments and resolves the image against the page', () => {
    const html = `<!doctype html><html><head><!-- <meta property="og:title" content="commented out"> -->
      <title>Fallback</title><meta content='Caf&eacute; &amp; "bar"' property=og:title><meta name="description" content="  Open   daily ">
      <meta property="og:image" content="/img/cover.png"></head><body><meta property="og:title" content="in the body"></body></html>`;
    assert.deepEqual(parsePageMeta(html, 'https://example.org/menu'), {
      title: 'Café & "bar"',
      description: 'Open daily',
      image: 'https://example.org/img/cover.png',
    });
  });

  it('falls back to <title>, and a page with no title has no preview', () => {
    assert.deepEqual(parsePageMeta('<title>Just a title</title>', 'https://example.org/'), {
      title: 'Just a title',
      description: null,
      image: null,
    });
    assert.equal(parsePageMeta('<p>nothing</p>', 'https://example.org/'), undefined);
    assert.equal(
      parsePageMeta('<meta property="og:image" content="javascript:alert(1)"><title>x</title>', 'https://example.org/')?.image,
      null,
    );
  });
});

for (const dialect of dialects) {
  describe(`link previews (${dialect})`, () => {
    let site: http.Server & { port: number };
    let test: TestGateway;
    let account: SeededAccount;
    let pageFetches = 0;

    before(async () => {
      site = await startSite((request, response) => {
        if (request.url === '/menu') {
          pageFetches += 1;
          return response
            .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
            .end(
              '<html><head><meta property="og:title" content="Our menu"><meta property="og:description" content="Lunch from noon"><meta property="og:image" content="/cover.png"></head></html>',
            );
        }
        if (request.url === '/cover.png') return response.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
        if (request.url === '/plain') return response.writeHead(200, { 'content-type': 'text/plain' }).end('no html here');
        return response.writeHead(404).end();
      });
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${site.port}` });
      account = await seedAccount(test.gateway, { numbers: 2 });
    });
    after(async () => {
      await test?.close();
      site?.close();
    });

    const send = (body: Record<string, unknown>) =>
      test.post('/api/send_message', { from_phone: account.phones[0], to_phone: account.phones[1], ...body }, account.apiKey);
    const settings = (body: Record<string, unknown>, apiKey = account.apiKey) =>
      test.inject({
        method: 'PATCH',
        url: '/api/account/settings',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });

    it('fetching is off by default: link_preview true is refused, and nothing is fetched', async () => {
      assert.deepEqual((await settings({})).json(), { link_previews: false });
      const before = pageFetches;
      const refused = await send({ message: `See http://127.0.0.1:${site.port}/menu`, link_preview: true });
      assert.deepEqual(
        [refused.statusCode, refused.json().error, refused.json().meta.field],
        [403, 'link_previews_disabled', 'link_preview'],
      );
      assert.equal(pageFetches, before);
    });

    it('once the account turns it on, the page is fetched through the guard and its preview sent and received', async () => {
      assert.deepEqual((await settings({ link_previews: true })).json(), { link_previews: true });
      const url = `http://127.0.0.1:${site.port}/menu`;
      const sent = await send({ message: `See ${url} today`, link_preview: true });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.deepEqual(sent.json().link_preview, { url, title: 'Our menu', description: 'Lunch from noon' });
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[1]!);
      for (let tries = 0; tries < 100; tries++) {
        const row = await test.gateway.store.db
          .selectFrom('messages')
          .select('structured')
          .where('number_id', '=', number.id)
          .where('direction', '=', 'inbound')
          .executeTakeFirst();
        if (row !== undefined) {
          assert.deepEqual(JSON.parse(row.structured!), { linkPreview: { url, title: 'Our menu', description: 'Lunch from noon' } });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Another account's setting is its own.
      const other = await seedAccount(test.gateway);
      assert.deepEqual((await settings({}, other.apiKey)).json(), { link_previews: false });
    });

    it('a page that is no HTML, or that the guard refuses, sends the text without a preview', async () => {
      const plain = await send({ message: `http://127.0.0.1:${site.port}/plain`, link_preview: true });
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.json().link_preview, undefined);
      const loopback = await send({ message: 'http://127.0.0.1:1/admin', link_preview: true });
      assert.equal(loopback.statusCode, 200, loopback.body);
      assert.equal(loopback.json().link_preview, undefined);
    });

    it('a preview given whole is sent without a fetch, and must name a link of the text', async () => {
      const before = pageFetches;
      const given = await send({ message: 'Menu: https://example.org/menu', link_preview: { title: 'Menu', description: 'Today' } });
      assert.equal(given.statusCode, 200, given.body);
      assert.deepEqual(given.json().link_preview, { url: 'https://example.org/menu', title: 'Menu', description: 'Today' });
      assert.equal(pageFetches, before);
      const elsewhere = await send({
        message: 'Menu: https://example.org/menu',
        link_preview: { url: 'https://evil.example/', title: 'Menu' },
      });
      assert.deepEqual([elsewhere.statusCode, elsewhere.json().meta.field], [400, 'link_preview.url']);
      const noLink = await send({ message: 'no link here', link_preview: true });
      assert.deepEqual([noLink.statusCode, noLink.json().meta.field], [400, 'link_preview']);
      const missingThumbnail = await send({
        message: 'https://example.org/',
        link_preview: { title: 'x', thumbnail_media_id: 'med_01jd0k6x9g8p1b6m3v7t2q4w5e' },
      });
      assert.deepEqual([missingThumbnail.statusCode, missingThumbnail.json().error], [404, 'media_not_found']);
    });
  });
}
