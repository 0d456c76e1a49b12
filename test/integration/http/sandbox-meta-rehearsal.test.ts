/**
 * The sandbox rehearses what only Meta's Cloud API carries (docs/cloud-api.md#rehearse-in-the-sandbox):
 * message templates, listed, read and sent as on a cloud number and checked by the same rules, and
 * interactive messages with a rehearsed tap. The recipient is another sandbox number, whose
 * stored copy is what the simulated network delivered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { receivedCopyOf, seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

const ORDER_READY = { name: 'order_ready', language: 'en_US', header_parameters: ['4521'], body_parameters: ['Ada', 'the north desk'] };

for (const dialect of dialects) {
  describe(`Cloud API rehearsals on sandbox numbers (${dialect})`, () => {
    let test: TestGateway;
    let business: SeededAccount;
    let customer: SeededAccount;
    let receiver: WebhookReceiver;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      business = await seedAccount(test.gateway);
      customer = await seedAccount(test.gateway);
      receiver = await WebhookReceiver.start();
      await test.gateway.webhooks.createWebhook(accountScope(business.accountId), { url: receiver.url('/taps'), eventTypes: ['message'] });
      test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const get = (url: string, apiKey = business.apiKey) =>
      test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
    const send = (body: Record<string, unknown>, apiKey = business.apiKey) =>
      test.post('/send_message', { from_phone: business.phones[0], to_phone: customer.phones[0], ...body }, apiKey);

    it('a sandbox number lists its rehearsal templates, and reads one, in the shapes of a cloud number', async () => {
      const from = encodeURIComponent(business.phones[0]!);
      for (const prefix of ['', '/api']) {
        const listed = await get(`${prefix}/templates?from_phone=${from}`);
        assert.equal(listed.statusCode, 200, listed.body);
        assert.equal(listed.json().from_phone, business.phones[0]);
        assert.deepEqual(
          listed
            .json()
            .templates.map((each: Record<string, unknown>) => [each.name, each.status, each.header_parameters, each.body_parameters]),
          [
            ['order_ready', 'APPROVED', 1, 2],
            ['hello_world', 'APPROVED', 0, 0],
          ],
        );
      }
      const one = await get(`/api/templates/order_ready?from_phone=${from}&language=en_US`);
      assert.deepEqual(
        [one.statusCode, one.json().category, one.json().components[0]],
        [200, 'UTILITY', { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', buttons: [] }],
      );
      const none = await get(`/templates/order_ready?from_phone=${from}&language=fr_FR`);
      assert.deepEqual([none.statusCode, none.json().error], [404, 'template_not_found']);
    });

    it('a template sent from a sandbox number reaches the recipient filled in, with the template named on the message', async () => {
      const sent = await send({ template: ORDER_READY });
      assert.deepEqual([sent.statusCode, sent.json().status], [200, 'sent'], sent.body);
      const copy = await receivedCopyOf(test.gateway, business, customer, sent.json().message_id, 'the template');
      assert.equal(copy.text, 'Order 4521\nHello Ada, your order is ready for pickup at the north desk.\nReply STOP to opt out');
      assert.deepEqual(copy.structured, {
        template: { name: 'order_ready', language: 'en_US', headerParameters: ['4521'], bodyParameters: ['Ada', 'the north desk'] },
      });

      const plain = await send({ template: { name: 'hello_world', language: 'en_US' } });
      assert.equal(plain.statusCode, 200, plain.body);
      const plainCopy = await receivedCopyOf(test.gateway, business, customer, plain.json().message_id, 'the template without parameters');
      assert.match(plainCopy.text, /^Hello World\nWelcome and congratulations/);
    });

    it('a template send is refused as a cloud number refuses it: unknown, wrongly filled, or from a number of another account', async () => {
      const unknown = await send({ template: { name: 'spring_sale', language: 'en_US' } });
      assert.deepEqual(
        [unknown.statusCode, unknown.json().error, unknown.json().meta],
        [404, 'template_not_found', { field: 'template.name' }],
      );
      const short = await send({ template: { ...ORDER_READY, body_parameters: ['Ada'] } });
      assert.deepEqual(
        [short.statusCode, short.json().error, short.json().meta],
        [400, 'invalid_template_parameters', { field: 'template.body_parameters', expected: 2 }],
      );
      const foreign = await send({ template: ORDER_READY }, customer.apiKey);
      assert.deepEqual([foreign.statusCode, foreign.json().error], [403, 'phone_not_owned']);
      const foreignList = await get(`/templates?from_phone=${encodeURIComponent(business.phones[0]!)}`, customer.apiKey);
      assert.deepEqual([foreignList.statusCode, foreignList.json().error], [403, 'phone_not_owned']);
    });

    it('an account adds and replaces its own rehearsal templates, on its own sandbox numbers only, and sends them', async () => {
      const put = (body: Record<string, unknown>, apiKey = business.apiKey, prefix = '') =>
        test.post(`${prefix}/sandbox/templates`, { phone: business.phones[0], ...body }, apiKey);
      const shipped = {
        name: 'order_shipped',
        language: 'en_GB',
        category: 'UTILITY',
        header: 'Parcel {{1}}',
        body: 'Hi {{1}}, it left at {{2}}.',
      };
      const added = await put(shipped, business.apiKey, '/api');
      assert.equal(added.statusCode, 200, added.body);
      assert.deepEqual(
        [added.json().name, added.json().status, added.json().header_parameters, added.json().body_parameters],
        ['order_shipped', 'APPROVED', 1, 2],
      );
      const sent = await send({
        template: { name: 'order_shipped', language: 'en_GB', header_parameters: ['77'], body_parameters: ['Ada', 'noon'] },
      });
      assert.equal(sent.statusCode, 200, sent.body);
      const copy = await receivedCopyOf(test.gateway, business, customer, sent.json().message_id, 'the added template');
      assert.equal(copy.text, 'Parcel 77\nHi Ada, it left at noon.');

      // Replaced by name and language: now pending review, so no longer sent.
      const replaced = await put({ ...shipped, status: 'PENDING' });
      assert.deepEqual([replaced.statusCode, replaced.json().status], [200, 'PENDING']);
      const listed = await get(`/templates?from_phone=${encodeURIComponent(business.phones[0]!)}`);
      assert.deepEqual(
        listed
          .json()
          .templates.filter((each: { name: string }) => each.name === 'order_shipped')
          .map((each: { status: string }) => each.status),
        ['PENDING'],
      );
      const pending = await send({
        template: { name: 'order_shipped', language: 'en_GB', header_parameters: ['77'], body_parameters: ['Ada', 'noon'] },
      });
      assert.deepEqual([pending.statusCode, pending.json().error], [404, 'template_not_found']);

      const gap = await put({ ...shipped, body: 'Hi {{2}}' });
      assert.deepEqual([gap.statusCode, gap.json().error, gap.json().meta.field], [400, 'invalid_request', 'body']);
      const typo = await put({ ...shipped, bodyy: 'x' });
      assert.deepEqual([typo.statusCode, typo.json().error], [400, 'invalid_request']);
      const foreign = await put(shipped, customer.apiKey);
      assert.deepEqual([foreign.statusCode, foreign.json().error], [403, 'phone_not_owned']);
    });

    const MENU = {
      body: 'How was your order?',
      footer: 'Tap one',
      buttons: [
        { id: 'rate_good', title: 'Good' },
        { id: 'rate_bad', title: 'Bad' },
      ],
    };

    it('an interactive message reaches the sandbox recipient as its body, its buttons kept in the structured content', async () => {
      const sent = await send({ interactive: MENU });
      assert.deepEqual([sent.statusCode, sent.json().status], [200, 'sent'], sent.body);
      const copy = await receivedCopyOf(test.gateway, business, customer, sent.json().message_id, 'the interactive message');
      assert.equal(copy.text, 'How was your order?');
      assert.deepEqual(copy.structured, {
        interactive: {
          body: 'How was your order?',
          header: null,
          footer: 'Tap one',
          kind: 'buttons',
          buttons: [
            { id: 'rate_good', title: 'Good' },
            { id: 'rate_bad', title: 'Bad' },
          ],
        },
      });
    });

    it('a rehearsed tap on one of its buttons arrives as a Cloud API tap: the title as the message, interactive_reply on the webhook', async () => {
      const person = uniquePhone();
      const sent = await send({ to_phone: person, interactive: MENU });
      assert.equal(sent.statusCode, 200, sent.body);
      const tap = (reply: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        test.post(
          '/api/sandbox/receive',
          { from_phone: person, to_phone: business.phones[0], reply_to: sent.json().message_id, interactive_reply: reply, ...extra },
          business.apiKey,
        );
      const tapped = await tap({ type: 'button', id: 'rate_good', title: 'Good' });
      assert.equal(tapped.statusCode, 200, tapped.body);
      assert.deepEqual(
        [tapped.json().message, tapped.json().interactive_reply],
        ['Good', { type: 'button', id: 'rate_good', title: 'Good' }],
      );
      const [delivered] = await receiver.waitForRequests(1, (request) => JSON.parse(request.body).message_id === tapped.json().message_id);
      const event = JSON.parse(delivered!.body);
      assert.deepEqual(
        [event.from_phone, event.message, event.interactive_reply, event.reply_to?.message_id],
        [person, 'Good', { type: 'button', id: 'rate_good', title: 'Good' }, sent.json().message_id],
      );

      // Only a tap a person could make: a button the message has, as it reads, on one of our interactive messages.
      const unknownButton = await tap({ type: 'button', id: 'rate_meh', title: 'Meh' });
      assert.deepEqual(
        [unknownButton.statusCode, unknownButton.json().error, unknownButton.json().meta.field],
        [400, 'invalid_request', 'interactive_reply.id'],
      );
      const wrongTitle = await tap({ type: 'button', id: 'rate_good', title: 'Bad' });
      assert.deepEqual([wrongTitle.statusCode, wrongTitle.json().meta.field], [400, 'interactive_reply.title']);
      const asRow = await tap({ type: 'list', id: 'rate_good', title: 'Good' });
      assert.deepEqual([asRow.statusCode, asRow.json().meta.field], [400, 'reply_to']);
      const withText = await tap({ type: 'button', id: 'rate_good', title: 'Good' }, { message: 'Good' });
      assert.deepEqual([withText.statusCode, withText.json().meta.field], [400, 'message']);
      const unanswered = await test.post(
        '/sandbox/receive',
        { from_phone: person, to_phone: business.phones[0], interactive_reply: { type: 'button', id: 'rate_good', title: 'Good' } },
        business.apiKey,
      );
      assert.deepEqual([unanswered.statusCode, unanswered.json().meta.field], [400, 'reply_to']);
      const stray = await tap({ type: 'button', id: 'rate_good', title: 'Good', colour: 'red' });
      assert.deepEqual([stray.statusCode, stray.json().error], [400, 'invalid_request']);
    });

    it("a rehearsed tap on a template's quick-reply button arrives with the payload its send gave, and only that one", async () => {
      const person = uniquePhone();
      const sent = await send({
        to_phone: person,
        template: { ...ORDER_READY, button_parameters: [{ index: 0, type: 'quick_reply', value: 'change_4521' }] },
      });
      assert.equal(sent.statusCode, 200, sent.body);
      const tap = (id: string) =>
        test.post(
          '/sandbox/receive',
          {
            from_phone: person,
            to_phone: business.phones[0],
            reply_to: sent.json().message_id,
            interactive_reply: { type: 'quick_reply', id, title: 'Change pickup' },
          },
          business.apiKey,
        );
      const tapped = await tap('change_4521');
      assert.equal(tapped.statusCode, 200, tapped.body);
      const [delivered] = await receiver.waitForRequests(1, (request) => JSON.parse(request.body).message_id === tapped.json().message_id);
      assert.deepEqual(JSON.parse(delivered!.body).interactive_reply, { type: 'quick_reply', id: 'change_4521', title: 'Change pickup' });
      const other = await tap('stop_4521');
      assert.deepEqual([other.statusCode, other.json().meta.field], [400, 'interactive_reply.id']);
    });
  });
}
