import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const PAGE = '<html><head><meta property="og:title" content="Our menu"><meta property="og:image" content="/cover.png"></head></html>';
// A page whose head is followed by 600 KiB of body: the preview reads its first 512 KiB.
const BIG_PAGE = `<html><head><title>Big</title></head><body>${'x'.repeat(600 * 1024)}</body></html>`;

// Issue 38 item 5: a send with `link_preview: true` is checked whole before anything is fetched,
// and every fetch a preview makes (the page, its og:image) is paid for: a number has so many
// preview fetches a window (WAGW_LINK_PREVIEW_FETCHES_PER_NUMBER, 4 here), its account the fetch
// budget's bytes (WAGW_MEDIA_FETCH_MIB_PER_WINDOW, 1 MiB here). A preview that cannot start is a
// 429 with Retry-After and no request; one whose budget runs out part-way is sent as far as it was paid.
for (const dialect of dialects) {
  describe(`what a link preview may cost (${dialect})`, () => {
    let site: http.Server;
    let port: number;
    let requests = 0;
    let test: TestGateway;
    let alice: SeededAccount;

    before(async () => {
      site = http.createServer((request, response) => {
        requests += 1;
        if (request.url === '/menu') return response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
        if (request.url === '/big') return response.writeHead(200, { 'content-type': 'text/html' }).end(BIG_PAGE);
        if (request.url === '/cover.png') return response.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
        return response.writeHead(404).end();
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      port = (site.address() as AddressInfo).port;
      test = await startTestGateway(dialect, {
        WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${port}`,
        WAGW_LINK_PREVIEW_FETCHES_PER_NUMBER: '4',
        WAGW_MEDIA_FETCH_MIB_PER_WINDOW: 'starter:1',
      });
      alice = await seedAccount(test.gateway, { numbers: 3 });
      const on = await test.inject({
        method: 'PATCH',
        url: '/api/account/settings',
        headers: { authorization: `Bearer ${alice.apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ link_previews: true }),
      });
      assert.equal(on.statusCode, 200, on.body);
    });

    after(async () => {
      await test?.close();
      site?.close();
    });

    const send = (fromPhone: string, body: Record<string, unknown>) =>
      test.post('/api/send_message', { from_phone: fromPhone, to_phone: alice.phones[2], ...body }, alice.apiKey);
    const link = (path: string) => `See http://127.0.0.1:${port}${path} today`;

    it('a send refused for its reply_to, its send_at, its expires_at or its group makes no request at all', async () => {
      const grouped = await test.post(
        '/groups',
        { from_phone: alice.phones[1], subject: 'Not yours', participants: [uniquePhone()] },
        alice.apiKey,
      );
      assert.equal(grouped.statusCode, 201, grouped.body);
      const farAhead = new Date(Date.now() + 60 * 86_400_000).toISOString();
      const past = new Date(Date.now() - 60_000).toISOString();
      const refusals = [
        [{ message: link('/menu'), link_preview: true, reply_to: 'msg_01j0000000000000000000000' }, 400],
        [{ message: link('/menu'), link_preview: true, send_at: farAhead }, 400],
        // A send_at in the past is "now" (it is sent); an expiry already past is what refuses.
        [{ message: link('/menu'), link_preview: true, expires_at: past }, 400],
        [{ message: 'caption', media: { url: `http://127.0.0.1:${port}/cover.png` }, reply_to: 'msg_01j0000000000000000000000' }, 400],
      ] as const;
      const before = requests;
      for (const [body, status] of refusals) {
        const refused = await send(alice.phones[0]!, body);
        assert.equal(refused.statusCode, status, refused.body);
      }
      const notMember = await test.post(
        '/api/send_message',
        { from_phone: alice.phones[0], to_group: grouped.json().id, message: link('/menu'), link_preview: true },
        alice.apiKey,
      );
      assert.deepEqual([notMember.statusCode, notMember.json().error], [403, 'not_group_member'], notMember.body);
      assert.equal(requests - before, 0, 'no refused send reached the site');
    });

    it("a number's preview fetches run out: the page and its image each take one, then 429 with Retry-After and no request", async () => {
      const before = requests;
      for (let sent = 0; sent < 2; sent++) {
        const answer = await send(alice.phones[0]!, { message: link('/menu'), link_preview: true });
        assert.equal(answer.statusCode, 200, answer.body);
        assert.equal(answer.json().link_preview.title, 'Our menu');
      }
      assert.equal(requests - before, 4, 'two pages and two images');
      const refused = await send(alice.phones[0]!, { message: link('/menu'), link_preview: true });
      assert.deepEqual(
        [refused.statusCode, refused.json().error, refused.json().meta.field, refused.json().meta.limit_fetches],
        [429, 'media_fetch_budget_exceeded', 'link_preview', 4],
        refused.body,
      );
      assert.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After says when');
      assert.equal(requests - before, 4, 'the refused preview fetched nothing');
      // A preview given whole costs nothing and is still sent.
      const given = await send(alice.phones[0]!, {
        message: link('/menu'),
        link_preview: { url: `http://127.0.0.1:${port}/menu`, title: 'Given' },
      });
      assert.equal(given.statusCode, 200, given.body);
    });

    it("the account's bytes are the fetch budget's: a preview cut short by it is sent without, and the next is 429", async () => {
      const before = requests;
      const first = await send(alice.phones[1]!, { message: link('/big'), link_preview: true });
      assert.deepEqual([first.statusCode, first.json().link_preview?.title], [200, 'Big'], first.body);
      // What is left of 1 MiB cannot pay for a second 512 KiB: the read stops there, and the text goes without.
      const second = await send(alice.phones[1]!, { message: link('/big'), link_preview: true });
      assert.deepEqual([second.statusCode, second.json().link_preview], [200, undefined], second.body);
      const third = await send(alice.phones[1]!, { message: link('/big'), link_preview: true });
      assert.deepEqual([third.statusCode, third.json().error], [429, 'media_fetch_budget_exceeded'], third.body);
      assert.ok(Number(third.headers['retry-after']) >= 1);
      assert.equal(requests - before, 2, 'the third fetched nothing');
    });
  });
}
