/**
 * The sandbox rehearses what only Meta's Cloud API carries (docs/cloud-api.md#rehearse-in-the-sandbox):
 * message templates, listed, read and sent as on a cloud number and checked by the same rules, and
 * interactive messages with a rehearsed tap. The recipient is another sandbox number, whose
 * stored copy is what the simulated network delivered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { receivedCopyOf, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const ORDER_READY = { name: 'order_ready', language: 'en_US', header_parameters: ['4521'], body_parameters: ['Ada', 'the north desk'] };

for (const dialect of dialects) {
  describe(`Cloud API rehearsals on sandbox numbers (${dialect})`, () => {
    let test: TestGateway;
    let business: SeededAccount;
    let customer: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      business = await seedAccount(test.gateway);
      customer = await seedAccount(test.gateway);
    });
    after(async () => {
      await test?.close();
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
  });
}
