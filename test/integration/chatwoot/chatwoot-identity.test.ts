import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { connectInbox } from '../../support/chatwoot-inbox.ts';
import { ChatwootStandIn } from '../../support/chatwoot-stand-in.ts';
import { dialects } from '../../support/databases.ts';
import { eventually, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

// A Chatwoot inbox keeps one contact and one conversation per person (issue 44: "the LID identity
// map keeps one contact per person"), whichever way WhatsApp names them from one message to the
// next: by LID alone with the phone withheld, by both, or by phone. An agent's reply goes to the
// person's phone once the number has learned it.

const SCOPES = ['read', 'send', 'webhooks'];

/** A LID as WhatsApp writes one: fifteen digits and "@lid". */
function uniqueLid(): string {
  return `${randomInt(100_000_000, 999_999_999)}${randomInt(100_000, 999_999)}@lid`;
}

for (const dialect of dialects) {
  describe(`a Chatwoot inbox keeps one contact per person, by LID or by phone (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let chatwoot: ChatwootStandIn;
    let inboxId: string;
    /** Messages received so far, each of which the inbox posts once. */
    let received = 0;

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv());
      account = await seedAccount(test.gateway, { scopes: SCOPES });
      chatwoot = await ChatwootStandIn.start();
      inboxId = (await connectInbox(test, account, chatwoot)).id;
    });
    after(async () => {
      await test.close();
      await chatwoot.close();
    });

    /** A message from the person, as WhatsApp names them this time; answers the phone the gateway saw (null when withheld). */
    async function receive(person: { phone: string; lid: string }, message: string, naming: 'lid' | 'both' | 'phone') {
      const response = await test.post(
        '/sandbox/receive',
        {
          from_phone: person.phone,
          to_phone: account.phones[0],
          message,
          ...(naming !== 'phone' && { from_lid: person.lid }),
          ...(naming === 'lid' && { withhold_phone: true }),
        },
        account.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      received += 1;
      return (response.json() as { from_phone: string | null }).from_phone;
    }

    /** Waits until the inbox has posted every message received so far. */
    async function allPosted() {
      await eventually(async () => {
        const deliveries = await test.gateway.webhooks.listDeliveries(operatorScope(), inboxId, 1000);
        const messages = deliveries.filter((entry) => entry.delivery.eventType === 'message');
        return messages.length === received && messages.every((entry) => entry.delivery.state === 'delivered') ? true : undefined;
      }, `${received} messages posted to the stand-in`);
    }

    /** The person's contacts in the stand-in, found by phone or by the LID identifier the inbox gives one known by LID alone. */
    function contactsOf(person: { phone: string; lid: string }) {
      return chatwoot.contacts.filter(
        (contact) => contact.phone_number === person.phone || contact.identifier === `whatsapp:${person.lid}`,
      );
    }

    /** The person's one contact and one conversation, holding `texts` in order; answers the conversation. */
    function onlyConversationOf(person: { phone: string; lid: string }, texts: string[]) {
      const contacts = contactsOf(person);
      assert.equal(contacts.length, 1, 'one contact');
      const conversations = chatwoot.conversations.filter((conversation) => conversation.contactId === contacts[0]!.id);
      assert.equal(conversations.length, 1, 'one conversation');
      assert.deepEqual(
        chatwoot.messagesIn(conversations[0]!.id).map((message) => message.content),
        texts,
      );
      assert.deepEqual(chatwoot.violations, []);
      return conversations[0]!;
    }

    it("a person who writes by LID first, then by phone, is one contact and one conversation; the agent's reply goes to their phone", async () => {
      const person = { phone: uniquePhone(), lid: uniqueLid() };
      assert.equal(await receive(person, 'hello, phone withheld', 'lid'), null, 'the first arrives by LID alone');
      await allPosted();
      assert.deepEqual(
        contactsOf(person).map((contact) => [contact.phone_number, contact.identifier]),
        [[null, `whatsapp:${person.lid}`]],
        'made by LID',
      );
      assert.equal(await receive(person, 'now with my phone', 'both'), person.phone);
      assert.equal(await receive(person, 'by phone alone', 'phone'), person.phone);
      await allPosted();
      const conversation = onlyConversationOf(person, ['hello, phone withheld', 'now with my phone', 'by phone alone']);

      const reply = await chatwoot.agentReply(conversation.id, 'we can reach you now');
      const answer = chatwoot.callbackAnswers.at(-1) as { status: number; body: { message_id?: string } };
      assert.equal(answer.status, 200, JSON.stringify(answer));
      const sent = await test.gateway.store.db
        .selectFrom('messages')
        .select(['to_phone', 'text'])
        .where('id', '=', answer.body.message_id ?? '')
        .execute();
      assert.deepEqual(sent, [{ to_phone: person.phone, text: reply.content }], "sent to the person's phone");
      assert.deepEqual(chatwoot.violations, []);
    });

    it('a person who writes by phone first, then with their LID, then by LID alone, stays one contact and one conversation', async () => {
      const person = { phone: uniquePhone(), lid: uniqueLid() };
      await receive(person, 'hello by phone', 'phone');
      await allPosted();
      await receive(person, 'with my LID too', 'both');
      // Withheld, but the number has learned whose LID it is.
      await receive(person, 'by LID alone', 'lid');
      await allPosted();
      onlyConversationOf(person, ['hello by phone', 'with my LID too', 'by LID alone']);
    });
  });
}
