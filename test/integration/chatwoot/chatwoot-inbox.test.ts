import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { ChatwootStandIn } from '../../support/chatwoot-stand-in.ts';
import { dialects } from '../../support/databases.ts';
import { eventually, receiveIncoming, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';

/** Sandbox messages, and the inbox made over the API as a customer's key would. */
const SCOPES = ['read', 'send', 'webhooks'];

for (const dialect of dialects) {
  describe(`a Chatwoot inbox takes incoming messages through the outbox (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let chatwoot: ChatwootStandIn;

    before(async () => {
      // Retried every second for half a minute: an outage of a few seconds on a busy machine is
      // still being retried when the stand-in comes back, as a longer one is with the default schedule.
      test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_WEBHOOK_RETRY_SCHEDULE: Array(30).fill('1').join(',') }));
      account = await seedAccount(test.gateway, { scopes: SCOPES });
      chatwoot = await ChatwootStandIn.start();
    });
    after(async () => {
      await test.close();
      await chatwoot.close();
    });

    async function createInbox(number: string | null = null) {
      const response = await test.post('/api/webhooks', chatwoot.inboxRequest(number), account.apiKey);
      assert.equal(response.statusCode, 201, response.body);
      return response.json() as { id: string; secret: string; chatwoot: Record<string, unknown> };
    }

    async function allDelivered(webhookId: string, count: number) {
      return eventually(async () => {
        const deliveries = (await test.gateway.webhooks.listDeliveries(operatorScope(), webhookId, 1000)).map((entry) => entry.delivery);
        return deliveries.length === count && deliveries.every((delivery) => delivery.state === 'delivered') ? deliveries : undefined;
      }, `${count} deliveries to the Chatwoot stand-in`);
    }

    it('is made over the API with its token sealed: the answer and the list show the ids, never the token', async () => {
      const inbox = await createInbox();
      const { callback_path: callbackPath, ...shown } = inbox.chatwoot;
      assert.deepEqual(shown, { account_id: chatwoot.accountId, inbox_id: chatwoot.inboxId, number: null });
      assert.match(String(callbackPath), new RegExp(`^/chatwoot/callbacks/${inbox.id}/[A-Za-z0-9_-]{43}$`), 'shown with the inbox');
      const listed = await test.inject({ method: 'GET', url: '/api/webhooks', headers: { authorization: `Bearer ${account.apiKey}` } });
      assert.ok(!listed.body.includes(chatwoot.apiAccessToken), 'the token is never shown');
      const stored = JSON.stringify(await test.gateway.store.db.selectFrom('webhooks').selectAll().where('id', '=', inbox.id).execute());
      assert.ok(!stored.includes(chatwoot.apiAccessToken), 'the token is sealed at rest');
      await test.gateway.webhooks.deleteWebhook(accountScope(account.accountId), inbox.id);
    });

    it('a new base URL is refused without the token: the stored one is never sent to another host', async () => {
      const inbox = await createInbox();
      const patch = (body: object) =>
        test.inject({
          method: 'PATCH',
          url: `/api/webhooks/${inbox.id}`,
          payload: body,
          headers: { authorization: `Bearer ${account.apiKey}` },
        });
      const elsewhere = 'https://8.8.8.8/';
      const refused = await patch({ url: elsewhere });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal((refused.json() as { meta: { field: string } }).meta.field, 'chatwoot.api_access_token');
      assert.notEqual((await test.gateway.webhooks.getWebhook(accountScope(account.accountId), inbox.id)).url, elsewhere);
      const moved = await patch({
        url: elsewhere,
        chatwoot: { account_id: chatwoot.accountId, inbox_id: chatwoot.inboxId, api_access_token: 'a-token-for-the-new-host' },
      });
      assert.equal(moved.statusCode, 200, moved.body);
      await test.gateway.webhooks.deleteWebhook(accountScope(account.accountId), inbox.id);
    });

    it("a person's first message creates their contact and conversation; their next ones join it, in order, media included", async () => {
      const inbox = await createInbox();
      const person = uniquePhone();
      await receiveIncoming(test, account, 'hello', person);
      await receiveIncoming(test, account, 'are you there?', person);
      const photo = await test.post(
        '/sandbox/receive',
        { from_phone: person, to_phone: account.phones[0], message: 'my receipt', media: { data: samples.png.toString('base64') } },
        account.apiKey,
      );
      assert.equal(photo.statusCode, 200, photo.body);
      await allDelivered(inbox.id, 3);

      const contacts = chatwoot.contacts.filter((contact) => contact.phone_number === person);
      assert.equal(contacts.length, 1, 'one contact per person');
      const conversations = chatwoot.conversations.filter((conversation) => conversation.contactId === contacts[0]!.id);
      assert.equal(conversations.length, 1, 'one conversation per person');
      const messages = chatwoot.messagesIn(conversations[0]!.id);
      assert.deepEqual(
        messages.map((message) => [message.content, message.message_type]),
        [
          ['hello', 'incoming'],
          ['are you there?', 'incoming'],
          ['my receipt', 'incoming'],
        ],
      );
      assert.deepEqual(
        messages[2]!.attachments.map((file) => [file.mimeType, file.size]),
        [['image/png', samples.png.length]],
        'the photo as an attachment',
      );
      assert.deepEqual(chatwoot.violations, [], 'every request as the API reference describes it');
      await test.gateway.webhooks.deleteWebhook(accountScope(account.accountId), inbox.id);
    });

    it('an outage of Chatwoot loses nothing: every message is retried and replays in order, none twice', async () => {
      const inbox = await createInbox();
      const person = uniquePhone();
      await receiveIncoming(test, account, 'before the outage', person);
      await allDelivered(inbox.id, 1);
      await chatwoot.stop();
      const during = Array.from({ length: 6 }, (_, index) => `during the outage ${index}`);
      for (const text of during) await receiveIncoming(test, account, text, person);
      // Down until every message has been tried and refused at least twice: the retry path a
      // longer outage takes too, only fewer times round.
      await eventually(async () => {
        const entries = await test.gateway.webhooks.listDeliveries(operatorScope(), inbox.id, 1000);
        const waiting = entries.filter((entry) => entry.delivery.state === 'pending');
        return waiting.length === during.length && waiting.every((entry) => entry.attempts.filter((a) => a.error !== null).length >= 2)
          ? true
          : undefined;
      }, 'every message refused twice while Chatwoot is down');
      await chatwoot.resume();
      await allDelivered(inbox.id, during.length + 1);

      const conversation = chatwoot.conversations.find(
        (candidate) => candidate.contactId === chatwoot.contacts.find((contact) => contact.phone_number === person)?.id,
      )!;
      assert.deepEqual(
        chatwoot.messagesIn(conversation.id).map((message) => message.content),
        ['before the outage', ...during],
        'each once, in the order they came',
      );
      assert.deepEqual(chatwoot.violations, []);
      await test.gateway.webhooks.deleteWebhook(accountScope(account.accountId), inbox.id);
    });

    it("an inbox for one number takes only that number's messages", async () => {
      const two = await seedAccount(test.gateway, { numbers: 2, scopes: SCOPES });
      const response = await test.post(
        '/api/webhooks',
        {
          url: chatwoot.baseUrl,
          events: ['message'],
          chatwoot: {
            account_id: chatwoot.accountId,
            inbox_id: chatwoot.inboxId,
            api_access_token: chatwoot.apiAccessToken,
            number: two.phones[1],
          },
        },
        two.apiKey,
      );
      assert.equal(response.statusCode, 201, response.body);
      const inboxId = (response.json() as { id: string }).id;
      const person = uniquePhone();
      await receiveIncoming(test, two, 'to the first number', person);
      const second = await test.post(
        '/sandbox/receive',
        { from_phone: person, to_phone: two.phones[1], message: 'to the second' },
        two.apiKey,
      );
      assert.equal(second.statusCode, 200, second.body);
      await allDelivered(inboxId, 1);
      const contact = chatwoot.contacts.find((candidate) => candidate.phone_number === person)!;
      const conversation = chatwoot.conversations.find((candidate) => candidate.contactId === contact.id)!;
      assert.deepEqual(
        chatwoot.messagesIn(conversation.id).map((message) => message.content),
        ['to the second'],
      );

      const foreign = await test.post(
        '/api/webhooks',
        {
          url: chatwoot.baseUrl,
          events: ['message'],
          chatwoot: { account_id: 1, inbox_id: 1, api_access_token: 'x', number: account.phones[0] },
        },
        two.apiKey,
      );
      assert.equal(foreign.statusCode, 400, "another account's number is refused");
      assert.equal(foreign.json().details.includes('chatwoot.number') || foreign.json().message.includes('chatwoot.number'), true);
    });
  });
}

describe('a Chatwoot base URL passes the webhooks’ address guard', () => {
  it('a private address is refused unless the operator allowed it', async () => {
    const test = await startDeliveringGateway('sqlite', {});
    try {
      const account = await seedAccount(test.gateway, { scopes: SCOPES });
      const response = await test.post(
        '/api/webhooks',
        { url: 'http://127.0.0.1:3000', events: ['message'], chatwoot: { account_id: 1, inbox_id: 1, api_access_token: 'token' } },
        account.apiKey,
      );
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().error, 'webhook_url_blocked');
    } finally {
      await test.close();
    }
  });
});
