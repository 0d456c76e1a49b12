import { Readable } from 'node:stream';
import { samples } from '../../support/media-samples.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const password = 'correct horse battery';

/** The texts of the message rows on a page, in the order shown. */
function messageTexts(body: string): string[] {
  return [...body.matchAll(/<td class="text">(?:<a [^>]*>(?:<img [^>]*>|[^<]*)<\/a>)?<span>([^<]*)<\/span><\/td>/g)].map(
    (match) => match[1]!,
  );
}

/** An href from the page, as a browser would follow it (attributes arrive HTML-escaped). */
function linkHref(body: string, text: string): string | undefined {
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const href = new RegExp(`<a href="([^"]+)">${escaped}</a>`).exec(body)?.[1];
  return href?.replaceAll('&amp;', '&');
}

for (const dialect of dialects) {
  describe(`dashboard numbers and messages (${dialect})`, () => {
    let test: TestGateway;
    let acmeId: string;
    let globexId: string;
    let acmeOne: WhatsAppNumber;
    let acmeTwo: WhatsAppNumber;
    let globexOne: WhatsAppNumber;

    async function signedIn(email: string): Promise<DashboardClient> {
      const client = new DashboardClient(test);
      const response = await client.signIn(email, password);
      assert.equal(response.statusCode, 303, `${email} signs in`);
      return client;
    }

    /** A fresh account with one user and the given sandbox numbers, for tests that count messages. */
    async function seedAccount(
      name: string,
      phones: string[],
    ): Promise<{ accountId: string; numbers: WhatsAppNumber[]; client: DashboardClient }> {
      const accountId = (await test.gateway.accounts.createAccount({ name, plan: 'pro' })).id;
      const email = `owner@${name.toLowerCase().replace(/\W/g, '')}.test`;
      await createTestUser(test.gateway, { accountId, email, password, role: 'owner' });
      const numbers: WhatsAppNumber[] = [];
      for (const phone of phones) numbers.push(await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone }));
      return { accountId, numbers, client: await signedIn(email) };
    }

    function receive(number: WhatsAppNumber, fromPhone: string, text: string) {
      return test.gateway.supervisor.simulatorFor(number)!.deliverIncoming(number, { fromPhone: fromPhone as E164, text });
    }

    before(async () => {
      test = await startTestGateway(dialect);
      acmeId = (await test.gateway.accounts.createAccount({ name: 'Acme', plan: 'pro' })).id;
      globexId = (await test.gateway.accounts.createAccount({ name: 'Globex', plan: 'pro' })).id;
      const owner = await createTestUser(test.gateway, { accountId: acmeId, email: 'owner@acme.test', password, role: 'owner' });
      await createTestUser(test.gateway, { accountId: acmeId, email: 'member@acme.test', password, role: 'member' });
      await createTestUser(test.gateway, { accountId: globexId, email: 'owner@globex.test', password, role: 'owner' });
      acmeOne = await test.gateway.numbers.addNumber(operatorScope(), {
        accountId: acmeId,
        phone: '+447700900001',
        holderUserId: owner.user.id,
      });
      acmeTwo = await test.gateway.numbers.addNumber(operatorScope(), { accountId: acmeId, phone: '+447700900002' });
      globexOne = await test.gateway.numbers.addNumber(operatorScope(), { accountId: globexId, phone: '+447700900101' });
      await receive(globexOne, '+447700900199', 'globex-secret');
    });
    after(() => test.close());

    describe('the numbers page', () => {
      it("lists the account's own numbers with holder, engine, live status and a simulate form each", async () => {
        const page = await (await signedIn('owner@acme.test')).get('/numbers');
        assert.equal(page.statusCode, 200);
        assert.match(page.body, /\+447700900001/);
        assert.match(page.body, /\+447700900002/);
        assert.doesNotMatch(page.body, /\+447700900101/, "another account's number is not shown");
        assert.match(page.body, /owner@acme\.test/, 'the holder is shown');
        assert.match(page.body, /data-status-source="\/numbers\/status\.json"/);
        assert.match(page.body, new RegExp(`data-number-status="${acmeOne.id}"`));
        for (const number of [acmeOne, acmeTwo]) {
          assert.match(page.body, new RegExp(`action="/numbers/${number.id}/simulate"`));
          assert.match(page.body, new RegExp(`<label for="from-${number.id}">From phone</label>`));
          assert.match(page.body, new RegExp(`<input id="from-${number.id}" name="from_phone" type="tel"`));
          assert.match(page.body, new RegExp(`<label for="message-${number.id}">Message</label>`));
        }
        assert.equal(page.body.split('Simulate incoming message</button>').length - 1, 2);
      });

      it('an owner sets a number to reject calls with a reply, and clears the reply; a member sees no such form and is refused', async () => {
        const owner = await signedIn('owner@acme.test');
        const page = await owner.get('/numbers');
        assert.match(page.body, new RegExp(`action="/numbers/${acmeTwo.id}/calls"`));
        const saved = await owner.submit('/numbers', `/numbers/${acmeTwo.id}/calls`, {
          reject_calls: 'on',
          call_reply_text: '  Please write <instead>.  ',
        });
        assert.equal(saved.statusCode, 303);
        let stored = await test.gateway.numbers.findNumber(operatorScope(), acmeTwo.id);
        assert.deepEqual([stored.rejectCalls, stored.callReplyText], [true, 'Please write <instead>.']);
        const audited = await test.gateway.store.db
          .selectFrom('audit_events')
          .select(['actor_kind', 'actor_label'])
          .where('target_id', '=', acmeTwo.id)
          .where('action', '=', 'number.settings_changed')
          .execute();
        assert.deepEqual(audited, [{ actor_kind: 'user', actor_label: 'owner@acme.test' }], 'an audit row names the signed-in user');
        const shown = await owner.get('/numbers');
        assert.match(shown.body, /Please write &(lt|#60|#x3[cC]);instead/, 'the reply is shown escaped');
        assert.doesNotMatch(shown.body, /Please write <instead>/);
        await owner.submit('/numbers', `/numbers/${acmeTwo.id}/calls`, { call_reply_text: '' });
        stored = await test.gateway.numbers.findNumber(operatorScope(), acmeTwo.id);
        assert.deepEqual([stored.rejectCalls, stored.callReplyText], [false, null], 'an unticked box turns rejection off');

        const member = await signedIn('member@acme.test');
        assert.doesNotMatch((await member.get('/numbers')).body, /\/calls"/);
        const refused = await member.submit('/numbers', `/numbers/${acmeTwo.id}/calls`, { reject_calls: 'on' });
        assert.equal(refused.statusCode, 403);
        assert.equal((await test.gateway.numbers.findNumber(operatorScope(), acmeTwo.id)).rejectCalls, false);
      });

      it('tells an account without numbers who links them', async () => {
        const { client } = await seedAccount('Numberless', []);
        const page = await client.get('/numbers');
        assert.equal(page.statusCode, 200);
        assert.match(page.body, /No numbers yet\. The operator links WhatsApp numbers to your account\./);
        assert.doesNotMatch(page.body, /Simulate incoming message/);
      });

      it('lets a member simulate an incoming message, which is stored as received', async () => {
        const client = await signedIn('member@acme.test');
        const response = await client.submit('/numbers', `/numbers/${acmeOne.id}/simulate`, {
          from_phone: '+44 7700 900555',
          message: 'Hello from a member',
        });
        assert.equal(response.statusCode, 303);
        assert.equal(response.headers.location, '/numbers');
        const page = await client.get('/numbers');
        assert.match(page.body, /The simulated message arrived\./);
        const stored = await test.gateway.history.page(accountScope(acmeId), { phone: '+447700900555', limit: 10 });
        assert.equal(stored.messages.length, 1);
        const [message] = stored.messages;
        assert.equal(message!.text, 'Hello from a member');
        assert.equal(message!.direction, 'inbound');
        assert.equal(message!.status, 'received');
        assert.equal(message!.numberId, acmeOne.id);
        assert.equal(message!.toPhone, acmeOne.phone);
      });

      it("answers 404 for another account's number and stores nothing", async () => {
        const client = await signedIn('owner@acme.test');
        const response = await client.submit('/numbers', `/numbers/${globexOne.id}/simulate`, {
          from_phone: '+447700900556',
          message: 'Probe',
        });
        assert.equal(response.statusCode, 404);
        assert.match(response.headers['content-type'] as string, /text\/html/);
        for (const accountId of [acmeId, globexId]) {
          const stored = await test.gateway.history.page(accountScope(accountId), { phone: '+447700900556', limit: 10 });
          assert.equal(stored.messages.length, 0);
        }
      });

      it('simulates an incoming file from the form: stored, shown on the Messages page, and served to the session', async () => {
        const client = await signedIn('member@acme.test');
        await client.get('/numbers');
        const response = await client.postMultipart(
          `/numbers/${acmeOne.id}/simulate`,
          { from_phone: '+447700900561', message: '' },
          { name: 'receipt.png', type: 'image/png', bytes: samples.png },
        );
        assert.equal(response.statusCode, 303, response.body);
        const [message] = (await test.gateway.history.page(accountScope(acmeId), { phone: '+447700900561', limit: 10 })).messages;
        assert.equal(message?.contentKind, 'image');
        assert.equal(message?.text, '', 'a file needs no caption');
        const media = await test.gateway.media.find(acmeId, message!.mediaId!);
        assert.deepEqual(
          [media.kind, media.mimeType, media.fileName, media.size],
          ['image', 'image/png', 'receipt.png', samples.png.length],
        );
        const messagesPage = await client.get('/messages');
        assert.match(messagesPage.body, new RegExp(`<img[^>]+src="/messages/media/${media.id}"`));
        const served = await client.get(`/messages/media/${media.id}`);
        assert.deepEqual(served.rawPayload, samples.png);
      });

      it('the form refuses a file over its limit or a type its bytes contradict, and a multipart post needs its CSRF token too', async () => {
        const client = await signedIn('owner@acme.test');
        await client.get('/numbers');
        const huge = await client.postMultipart(
          `/numbers/${acmeTwo.id}/simulate`,
          { from_phone: '+447700900562', message: 'big' },
          { name: 'big.pdf', type: 'application/pdf', bytes: samples.pdf(16 * 1024 * 1024 + 10) },
        );
        assert.equal(huge.statusCode, 400, 'media_too_large, as the API answers it');
        assert.match(huge.body, /The form takes files up to 16 MiB/);
        await client.get('/numbers');
        const forged = await client.postMultipart(
          `/numbers/${acmeTwo.id}/simulate`,
          { from_phone: '+447700900563', message: 'forged' },
          { name: 'a.png', type: 'image/png', bytes: samples.png },
          { csrf: false },
        );
        assert.equal(forged.statusCode, 403);
        const stored = await test.gateway.history.page(accountScope(acmeId), { numberId: acmeTwo.id, limit: 10 });
        assert.equal(stored.messages.length, 0);
      });

      it('a signed-out multipart post is sent to sign in before its body is read', async () => {
        const anonymous = new DashboardClient(test);
        const response = await anonymous.postMultipart(
          `/numbers/${acmeOne.id}/simulate`,
          { from_phone: '+447700900564', message: 'x' },
          { name: 'a.png', type: 'image/png', bytes: samples.png },
        );
        assert.deepEqual([response.statusCode, response.headers.location], [303, '/login']);
      });

      it('refuses a simulate form without the CSRF token', async () => {
        const client = await signedIn('owner@acme.test');
        await client.get('/numbers');
        const response = await client.post(
          `/numbers/${acmeOne.id}/simulate`,
          { from_phone: '+447700900557', message: 'Forged' },
          { csrf: false },
        );
        assert.equal(response.statusCode, 403);
        const stored = await test.gateway.history.page(accountScope(acmeId), { phone: '+447700900557', limit: 10 });
        assert.equal(stored.messages.length, 0);
      });

      it('shows the form again with the error and what was typed when the input is invalid', async () => {
        const client = await signedIn('owner@acme.test');
        const badPhone = await client.submit('/numbers', `/numbers/${acmeTwo.id}/simulate`, {
          from_phone: 'not a phone',
          message: 'Kept <text>',
        });
        assert.equal(badPhone.statusCode, 400);
        assert.match(badPhone.body, /role="alert">From phone is not a valid international phone number/);
        assert.match(badPhone.body, /value="not a phone"/);
        assert.match(badPhone.body, /Kept &lt;text><\/textarea>/);
        const blank = await client.submit('/numbers', `/numbers/${acmeTwo.id}/simulate`, { from_phone: '+447700900558', message: '   ' });
        assert.equal(blank.statusCode, 400);
        assert.match(blank.body, /The message is empty or only whitespace\./);
        const stored = await test.gateway.history.page(accountScope(acmeId), { numberId: acmeTwo.id, limit: 10 });
        assert.equal(stored.messages.length, 0);
      });

      it("serves status.json with the viewer's own numbers only, uncached", async () => {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), acmeTwo.id, 'disconnected');
        const client = await signedIn('member@acme.test');
        const response = await client.get('/numbers/status.json');
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers['cache-control'], 'no-store');
        const body = response.json() as { numbers: Array<{ id: string; phone: string; status: string }> };
        assert.deepEqual(
          body.numbers.map((number) => [number.id, number.phone, number.status]).sort(),
          [
            [acmeOne.id, acmeOne.phone, 'connected'],
            [acmeTwo.id, acmeTwo.phone, 'disconnected'],
          ].sort(),
        );
        const signedOut = await new DashboardClient(test).get('/numbers/status.json');
        assert.equal(signedOut.statusCode, 303);
      });
    });

    describe('the messages page', () => {
      let filters: { accountId: string; numbers: WhatsAppNumber[]; client: DashboardClient };

      before(async () => {
        filters = await seedAccount('Filters', ['+447700900301', '+447700900302']);
        const [first, second] = filters.numbers;
        await receive(first!, '+447700900201', 'in-one');
        await receive(second!, '+447700900202', 'in-two');
        await test.gateway.sender.send({
          number: first!,
          toPhone: '+447700900203' as E164,
          text: 'out-one',
        });
      });

      it('lists sent and received messages newest first', async () => {
        const page = await filters.client.get('/messages');
        assert.equal(page.statusCode, 200);
        assert.deepEqual(messageTexts(page.body), ['out-one', 'in-two', 'in-one']);
        assert.doesNotMatch(page.body, /Older messages/);
      });

      it('shows a thumbnail for a photo and a download link for a document, both served through the session only', async () => {
        const own = await seedAccount('Media', ['+447700900311']);
        const [first] = own.numbers;
        const media = (bytes: Buffer) => test.gateway.media.ingest(Readable.from([bytes]), { accountId: own.accountId, source: 'upload' });
        const photo = await media(samples.png);
        const pdf = await media(samples.pdf(700));
        await test.gateway.sender.send({
          number: first!,
          toPhone: '+447700900204' as E164,
          text: 'a photo',
          media: photo,
        });
        await test.gateway.sender.send({
          number: first!,
          toPhone: '+447700900205' as E164,
          text: '',
          media: pdf,
        });
        const page = await own.client.get('/messages');
        assert.deepEqual(messageTexts(page.body), ['', 'a photo']);
        assert.match(
          page.body,
          new RegExp(`<img src="/messages/media/${photo.id}" alt="image attachment" class="thumbnail" loading="lazy"/?>`),
        );
        assert.match(page.body, new RegExp(`<a href="/messages/media/${pdf.id}" class="media-link">Download the document</a>`));
        const image = await own.client.get(`/messages/media/${photo.id}`);
        assert.equal(image.statusCode, 200);
        assert.equal(image.headers['content-type'], 'image/png');
        assert.deepEqual(image.rawPayload, samples.png);
        const signedOut = await new DashboardClient(test).get(`/messages/media/${photo.id}`);
        assert.equal(signedOut.statusCode, 303, 'a visitor is sent to sign in');
      });

      it('marks an edited message and one deleted for everyone', async () => {
        const own = await seedAccount('Changes', ['+447700900321']);
        const [first] = own.numbers;
        const edited = await test.gateway.sender.send({
          number: first!,
          toPhone: '+447700900206' as E164,
          text: 'first draft',
        });
        const revoked = await test.gateway.sender.send({
          number: first!,
          toPhone: '+447700900207' as E164,
          text: 'wrong chat',
        });
        await test.gateway.messageActions.edit(first!, edited, 'second draft');
        await test.gateway.messageActions.revoke(first!, revoked);
        const page = await own.client.get('/messages');
        assert.match(page.body, /<span>second draft<\/span><span class="muted"> \(edited\)<\/span>/);
        assert.match(page.body, /<span><\/span><span class="muted"> \(deleted for everyone\)<\/span>/);
        assert.doesNotMatch(page.body, /first draft|wrong chat/, 'the old texts stay in the history, not on the list');
      });

      it("shows a group message with its group's subject, escaped, and lists each number's groups on the Numbers page", async () => {
        const own = await seedAccount('Groupies', ['+447700900331', '+447700900332']);
        const [first, second] = own.numbers as [WhatsAppNumber, WhatsAppNumber];
        const group = await test.gateway.groups.create(first, 'Route <b>7</b>', [second.phone, '+447700900208']);
        await test.gateway.sender.send({
          number: first,
          toGroup: group.id,
          mentions: [],
          text: 'to the group',
        });
        const messages = await own.client.get('/messages');
        assert.match(
          messages.body,
          /<span class="mono">group<\/span><span class="muted"> in Route &lt;b>7&lt;\/b><\/span>/,
          'the sent message names its group',
        );
        assert.match(
          messages.body,
          new RegExp(`<span class="mono">\\${first.phone}</span><span class="muted"> in Route &lt;b>7&lt;/b></span>`),
          'the copy the other number received names the group and its sender',
        );
        const numbers = await own.client.get('/numbers');
        assert.equal(numbers.body.split('Route &lt;b>7&lt;/b>').length - 1, 2, 'both numbers list the group');
        assert.match(numbers.body, /<td>3<\/td><td>Admin<\/td>/);
        assert.match(numbers.body, /<td>3<\/td><td>Member<\/td>/);
        assert.doesNotMatch(numbers.body, /Route <b>7/, 'the subject is escaped');
      });

      it('filters by direction', async () => {
        const sent = await filters.client.get('/messages?direction=outbound');
        assert.equal(sent.statusCode, 200);
        assert.deepEqual(messageTexts(sent.body), ['out-one']);
        assert.match(sent.body, /<option value="outbound" selected>Sent<\/option>/);
        const received = await filters.client.get('/messages?direction=inbound');
        assert.deepEqual(messageTexts(received.body), ['in-two', 'in-one']);
        const any = await filters.client.get('/messages?direction=any');
        assert.deepEqual(messageTexts(any.body), ['out-one', 'in-two', 'in-one']);
      });

      it('filters by phone, in any common spelling', async () => {
        const page = await filters.client.get(`/messages?phone=${encodeURIComponent('+44 7700 900202')}`);
        assert.equal(page.statusCode, 200);
        assert.deepEqual(messageTexts(page.body), ['in-two']);
        assert.match(page.body, /value="\+44 7700 900202"/);
      });

      it('filters by number', async () => {
        const [first, second] = filters.numbers;
        const page = await filters.client.get(`/messages?number_id=${first!.id}`);
        assert.equal(page.statusCode, 200);
        assert.deepEqual(messageTexts(page.body), ['out-one', 'in-one']);
        assert.match(page.body, new RegExp(`<option value="${first!.id}" selected>\\+447700900301</option>`));
        const combined = await filters.client.get(`/messages?number_id=${second!.id}&direction=outbound`);
        assert.deepEqual(messageTexts(combined.body), []);
        assert.match(combined.body, /No messages match these filters/);
      });

      it("refuses another account's number id without revealing its messages", async () => {
        const page = await filters.client.get(`/messages?number_id=${globexOne.id}`);
        assert.equal(page.statusCode, 400);
        assert.match(page.body, /role="alert">That number is not one of your account&#39;s numbers/);
        assert.doesNotMatch(page.body, /globex-secret/);
        assert.doesNotMatch(page.body, /\+447700900101/);
      });

      it('answers invalid filters with the error and a 400', async () => {
        for (const [query, message] of [
          ['phone=banana', /is not a phone number/],
          ['cursor=nonsense', /The page link is not valid/],
          ['direction=sideways', /Direction must be Sent, Received or Any/],
          ['number_id=num_doesnotexist', /not one of your account/],
        ] as const) {
          const page = await filters.client.get(`/messages?${query}`);
          assert.equal(page.statusCode, 400, query);
          assert.match(page.body, message, query);
          assert.match(page.body, /<form method="get" action="\/messages"/, 'the filter form is still there');
        }
      });

      it('tells an account without messages where to make one', async () => {
        const { client } = await seedAccount('Quiet', ['+447700900401']);
        const page = await client.get('/messages');
        assert.equal(page.statusCode, 200);
        assert.match(page.body, /No messages yet/);
        assert.match(page.body, /<a href="\/numbers">/);
      });

      it('pages through older messages 50 at a time, keeping the filters, with no overlap', async () => {
        const busy = await seedAccount('Busy', ['+447700900501']);
        const number = busy.numbers[0]!;
        for (let index = 0; index < 56; index++) await receive(number, '+447700900502', `busy-${String(index).padStart(2, '0')}`);
        await test.gateway.sender.send({
          number,
          toPhone: '+447700900502' as E164,
          text: 'busy-sent',
        });

        const first = await busy.client.get('/messages?direction=inbound');
        assert.equal(first.statusCode, 200);
        const firstTexts = messageTexts(first.body);
        assert.equal(firstTexts.length, 50);
        assert.equal(firstTexts[0], 'busy-55', 'the newest comes first');
        assert.doesNotMatch(first.body, /Newest<\/a>/, 'the first page has no link back to itself');
        const older = linkHref(first.body, 'Older messages →');
        assert.ok(older, 'the first page links to older messages');
        assert.match(older, /direction=inbound/);
        assert.match(older, /cursor=/);

        const second = await busy.client.get(older);
        assert.equal(second.statusCode, 200);
        const secondTexts = messageTexts(second.body);
        assert.deepEqual(secondTexts, ['busy-05', 'busy-04', 'busy-03', 'busy-02', 'busy-01', 'busy-00']);
        assert.equal(new Set([...firstTexts, ...secondTexts]).size, 56, 'no message is on both pages');
        assert.doesNotMatch(second.body, /Older messages/);
        assert.equal(linkHref(second.body, '← Newest'), '/messages?direction=inbound');
      });

      it('escapes message text', async () => {
        const [first] = filters.numbers;
        const client = filters.client;
        const response = await client.submit('/numbers', `/numbers/${first!.id}/simulate`, {
          from_phone: '+447700900204',
          message: '<script>alert(1)</script>',
        });
        assert.equal(response.statusCode, 303);
        const page = await client.get('/messages?phone=%2B447700900204');
        assert.equal(page.statusCode, 200);
        assert.ok(page.body.includes('&lt;script'), 'the text is shown escaped');
        assert.ok(!page.body.includes('<script>alert'), 'the text is never markup');
      });
    });
  });
}
