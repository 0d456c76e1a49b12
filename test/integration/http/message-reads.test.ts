import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';

// GET /messages, GET /messages/{id} and GET /numbers: reading back what the account sent and
// received, and whether its numbers can send, at both paths.
for (const dialect of dialects) {
  describe(`reading messages and numbers back (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;
    const CUSTOMER = '+14155550111';
    const SECOND_CUSTOMER = '+14155550122';
    const sentIds: string[] = [];
    let receivedId: string;
    let photoId: string;
    let beforeReceived: string;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway, { plan: 'pro', numbers: 2 });
      other = await seedAccount(test.gateway);
      for (let index = 0; index < 5; index++) {
        const sent = await test.post(
          '/send_message',
          { from_phone: account.phones[0], to_phone: index % 2 === 0 ? CUSTOMER : SECOND_CUSTOMER, message: `sent ${index}` },
          account.apiKey,
        );
        assert.equal(sent.statusCode, 200, sent.body);
        sentIds.push(sent.json().message_id);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
      beforeReceived = new Date().toISOString();
      const received = await test.post(
        '/sandbox/receive',
        { from_phone: CUSTOMER, to_phone: account.phones[1], message: 'a reply' },
        account.apiKey,
      );
      receivedId = received.json().message_id;
      const photo = await test.post(
        '/sandbox/receive',
        { from_phone: SECOND_CUSTOMER, to_phone: account.phones[1], message: 'a photo', media: { data: samples.png.toString('base64') } },
        account.apiKey,
      );
      photoId = photo.json().message_id;
      await test.post('/sandbox/receive', { from_phone: CUSTOMER, to_phone: other.phones[0], message: 'not yours' }, other.apiKey);
    });

    after(() => test?.close());

    const get = (url: string, key = account.apiKey) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    const ids = (response: { json(): { messages: { message_id: string }[] } }) =>
      response.json().messages.map((message) => message.message_id);

    it("lists the account's messages newest first, at both paths, and pages through all of them by cursor", async () => {
      const all = await get('/messages');
      assert.equal(all.statusCode, 200, all.body);
      assert.deepEqual(ids(all), [photoId, receivedId, ...[...sentIds].reverse()]);
      assert.equal(all.json().next_cursor, null);
      assert.deepEqual(ids(await get('/api/messages')), ids(all));

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(`/api/messages?limit=3${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
        assert.ok(page.json().messages.length <= 3);
        seen.push(...ids(page));
        cursor = page.json().next_cursor;
      } while (cursor !== null);
      assert.deepEqual(seen, ids(all), 'pages join up without gaps or repeats');
    });

    it('each filter narrows the list: our phone, the peer, direction, status, and a time window', async () => {
      assert.deepEqual(ids(await get(`/messages?phone=${encodeURIComponent(account.phones[1]!)}`)), [photoId, receivedId]);
      assert.deepEqual(ids(await get(`/messages?peer=${encodeURIComponent(CUSTOMER)}`)), [receivedId, sentIds[4], sentIds[2], sentIds[0]]);
      assert.deepEqual(
        ids(await get('/messages?peer=%2B1%20415%20555%200122&direction=outbound')),
        [sentIds[3], sentIds[1]],
        'a peer in any common spelling',
      );
      assert.deepEqual(ids(await get('/messages?direction=inbound')), [photoId, receivedId]);
      assert.deepEqual(ids(await get('/messages?status=received')), [photoId, receivedId]);
      assert.equal((await get('/messages?status=failed')).json().messages.length, 0);
      assert.deepEqual(ids(await get(`/messages?since=${encodeURIComponent(beforeReceived)}`)), [photoId, receivedId]);
      assert.deepEqual(ids(await get(`/messages?until=${encodeURIComponent(beforeReceived)}`)), [...sentIds].reverse());
    });

    it("one message by id carries its direction, kind and file; another account's id is a 404 like an unknown one", async () => {
      const photo = await get(`/messages/${photoId}`);
      assert.equal(photo.statusCode, 200, photo.body);
      const body = photo.json();
      assert.deepEqual(
        [body.direction, body.from_phone, body.to_phone, body.message, body.content_kind, body.status],
        ['inbound', SECOND_CUSTOMER, account.phones[1], 'a photo', 'image', 'received'],
      );
      assert.deepEqual(
        [body.media.status, body.media.kind, body.media.size, body.media.url],
        ['available', 'image', samples.png.length, `/media/${body.media.id}`],
      );
      assert.deepEqual((await get(body.media.url)).rawPayload, samples.png);
      const sent = (await get(`/api/messages/${sentIds[0]}`)).json();
      assert.deepEqual(
        [sent.direction, sent.from_phone, sent.to_phone, sent.content_kind],
        ['outbound', account.phones[0], CUSTOMER, 'text'],
      );
      assert.equal(sent.media, undefined);

      for (const [url, key] of [
        [`/messages/${photoId}`, other.apiKey],
        ['/messages/msg_00000000000000000000000000', account.apiKey],
      ] as const) {
        const missing = await get(url, key);
        assert.deepEqual([missing.statusCode, missing.json().error, missing.json().meta], [404, 'message_not_found', { field: 'id' }]);
      }
      const foreignFilter = await get(`/messages?phone=${encodeURIComponent(other.phones[0]!)}`);
      assert.deepEqual(
        [foreignFilter.statusCode, foreignFilter.json().error, foreignFilter.json().meta],
        [404, 'number_not_found', { field: 'phone' }],
      );
      assert.ok(!ids(await get('/messages', other.apiKey)).includes(photoId), 'another account lists only its own');
    });

    it('a file whose retention ended is listed as expired, without a url', async () => {
      const mediaId = (await get(`/messages/${photoId}`)).json().media.id;
      await test.gateway.store.db
        .updateTable('media')
        .set({ expires_at: Date.now() - 1 })
        .where('id', '=', mediaId)
        .execute();
      const expired = (await get(`/messages/${photoId}`)).json().media;
      assert.deepEqual([expired.status, expired.id, expired.url], ['expired', mediaId, undefined]);
    });

    it('every bad filter is a 400 naming its field', async () => {
      for (const [query, field, error] of [
        ['limit=0', 'limit', 'invalid_request'],
        ['limit=101', 'limit', 'invalid_request'],
        ['limit=ten', 'limit', 'invalid_request'],
        ['direction=sideways', 'direction', 'invalid_request'],
        ['status=lost', 'status', 'invalid_request'],
        ['since=yesterday', 'since', 'invalid_request'],
        ['until=2026-11-25', 'until', 'invalid_request'],
        ['peer=12', 'peer', 'invalid_phone_number'],
        ['cursor=nonsense', 'cursor', 'invalid_request'],
      ] as const) {
        const response = await get(`/api/messages?${query}`);
        assert.deepEqual([response.statusCode, response.json().error, response.json().meta?.field], [400, error, field], query);
      }
      const unknown = await get('/api/messages?colour=blue');
      assert.deepEqual([unknown.statusCode, unknown.json().error], [400, 'invalid_request']);
    });

    it("GET /numbers lists the account's numbers with their session status, and whether each can send", async () => {
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[1]!, 'disconnected');
      try {
        for (const url of ['/numbers', '/api/numbers']) {
          const response = await get(url);
          assert.equal(response.statusCode, 200, response.body);
          const numbers = response.json().numbers as { phone: string; engine: string; status: string; can_send: boolean }[];
          assert.deepEqual(numbers.map((number) => [number.phone, number.engine, number.status, number.can_send]).sort(), [
            [account.phones[0], 'sandbox', 'connected', true],
            [account.phones[1], 'sandbox', 'disconnected', false],
          ]);
        }
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[1]!, 'connected');
      }
    });

    it("without a bearer key, /api/x answers 401 in the envelope, and /messages and /numbers are the dashboard's pages unless the body or the wanted answer is JSON", async () => {
      for (const url of ['/api/messages', '/api/numbers', `/api/messages/${photoId}`, `/messages/${photoId}`]) {
        const response = await test.inject({ method: 'GET', url });
        assert.deepEqual([response.statusCode, response.json().error], [401, 'missing_api_key'], url);
      }
      for (const url of ['/messages', '/numbers']) {
        const page = await test.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
        assert.deepEqual([page.statusCode, page.headers.location], [303, `/login?next=${encodeURIComponent(url)}`], url);
      }
      // A program that asks for JSON and not for a page is told so, in the envelope, as under /api.
      for (const url of ['/messages', '/numbers'])
        for (const accept of ['application/json', 'application/problem+json, application/json;q=0.9']) {
          const keyless = await test.inject({ method: 'GET', url, headers: { accept } });
          assert.deepEqual([keyless.statusCode, keyless.json().error], [401, 'missing_api_key'], `${url} with Accept: ${accept}`);
        }
      const browser = await test.inject({
        method: 'GET',
        url: '/numbers',
        headers: { accept: 'text/html,application/json;q=0.9,*/*;q=0.8' },
      });
      assert.equal(browser.statusCode, 303, 'a browser that also accepts JSON still gets the page');
      const badKey = await test.inject({ method: 'GET', url: '/messages', headers: { authorization: 'Bearer nope' } });
      assert.deepEqual(
        [badKey.statusCode, badKey.json().error],
        [401, 'invalid_api_key'],
        'a bearer token, even a wrong one, makes it the API',
      );
      // A dashboard behind a proxy's password gets Basic credentials from the browser: still the page.
      const basic = await test.inject({
        method: 'GET',
        url: '/numbers',
        headers: { authorization: `Basic ${Buffer.from('ops:secret').toString('base64')}` },
      });
      assert.deepEqual([basic.statusCode, basic.headers.location], [303, '/login?next=%2Fnumbers']);
      // A JSON body is a program's, key or not: the dashboard's own resume is a form.
      const keyless = await test.inject({
        method: 'POST',
        url: `/numbers/num_${'0'.repeat(26)}/resume`,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      assert.deepEqual([keyless.statusCode, keyless.json().error], [401, 'missing_api_key']);
      const form = await test.inject({
        method: 'POST',
        url: `/numbers/num_${'0'.repeat(26)}/resume`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: '',
      });
      assert.equal(form.statusCode, 403, "a form without the dashboard's token is refused as a forgery");
      assert.match(form.headers['content-type'] ?? '', /^text\/html/);
    });
  });
}
