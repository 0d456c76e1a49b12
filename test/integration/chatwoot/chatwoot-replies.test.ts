import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { listAuditEvents } from '../../../src/store/repositories/audit-events.ts';
import { connectInbox as connectChatwootInbox } from '../../support/chatwoot-inbox.ts';
import { ChatwootStandIn } from '../../support/chatwoot-stand-in.ts';
import { dialects } from '../../support/databases.ts';
import { eventually, receiveIncoming, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const SCOPES = ['read', 'send', 'webhooks'];

for (const dialect of dialects) {
  describe(`an agent's reply in Chatwoot reaches the person once, and its ticks come back (${dialect})`, () => {
    let test: TestGateway;
    let chatwoot: ChatwootStandIn;

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv());
      chatwoot = await ChatwootStandIn.start();
    });
    after(async () => {
      await test.close();
      await chatwoot.close();
    });

    const connectInbox = (account: SeededAccount) => connectChatwootInbox(test, account, chatwoot);

    /** The person's conversation in the stand-in, once their first message is in it. */
    async function conversationOf(person: string) {
      return eventually(async () => {
        const contact = chatwoot.contacts.find((candidate) => candidate.phone_number === person);
        const conversation = contact && chatwoot.conversations.find((candidate) => candidate.contactId === contact.id);
        return conversation !== undefined && chatwoot.messagesIn(conversation.id).length > 0 ? conversation : undefined;
      }, `the conversation of ${person}`);
    }

    async function sentTo(account: SeededAccount, person: string) {
      return test.gateway.store.db
        .selectFrom('messages')
        .select(['id', 'text', 'engine_message_id', 'status'])
        .where('account_id', '=', account.accountId)
        .where('direction', '=', 'outbound')
        .where('to_phone', '=', person)
        .execute();
    }

    it('the reply is sent once (a repeated callback sends nothing), our own posts are not taken for replies, and no echo comes back', async () => {
      const account = await seedAccount(test.gateway, { scopes: SCOPES });
      const inbox = await connectInbox(account);
      const person = uniquePhone();
      await receiveIncoming(test, account, 'hi, is my order shipped?', person);
      const conversation = await conversationOf(person);
      await eventually(
        async () =>
          chatwoot.callbackAnswers.some((answer) => JSON.stringify(answer).includes('not an outgoing message')) ? true : undefined,
        'the callback for the incoming message we posted, ignored',
      );

      const reply = await chatwoot.agentReply(conversation.id, 'Yes, it left this morning.');
      const answer = chatwoot.callbackAnswers.at(-1) as { status: number; body: { message_id?: string } };
      assert.equal(answer.status, 200, JSON.stringify(answer));
      assert.match(answer.body.message_id ?? '', /^msg_/);
      assert.deepEqual(
        (await sentTo(account, person)).map((message) => message.text),
        ['Yes, it left this morning.'],
      );

      const again = (await chatwoot.announce(reply)) as { body: { ignored?: string } };
      assert.equal(again.body.ignored, 'already sent');
      assert.equal((await sentTo(account, person)).length, 1, 'a repeated callback sends nothing more');
      const replied = (await listAuditEvents(test.gateway.store.db, { accountId: account.accountId, limit: 100 })).filter(
        (event) => event.action === 'message.replied',
      );
      assert.deepEqual(
        replied.map((event) => [event.actor.kind, event.actor.id, event.targetId, event.details]),
        [
          [
            'system',
            inbox.id,
            answer.body.message_id,
            {
              from_phone: account.phones[0],
              to_phone: person,
              status: 'sent',
              via: 'chatwoot',
              chatwoot_message_id: reply.id,
              chatwoot_conversation_id: conversation.id,
            },
          ],
        ],
        'the reply is one audit row naming the inbox, and the repeat adds none',
      );

      const [sent] = await sentTo(account, person);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      for (const status of ['delivered', 'read'] as const) {
        await test.gateway.receiver.recordReceipt({
          lease: test.gateway.keeper.leaseOf(number.id)!,
          phone: number.phone,
          engineMessageId: sent!.engine_message_id!,
          status,
          errorCode: null,
          at: new Date(),
        });
        await eventually(
          async () => (reply.statuses.includes(status) ? true : undefined),
          `the reply ${status} in Chatwoot (${reply.statuses.join(', ')}; ours ${JSON.stringify(await sentTo(account, person))})`,
        );
      }
      // The sandbox's own delivery receipt may come too: ticks only ever move forward, ending read.
      const ticks = reply.statuses.filter((status, index) => status !== reply.statuses[index - 1]);
      assert.deepEqual(
        ticks.filter((status) => status !== 'sent'),
        ['delivered', 'read'],
        reply.statuses.join(', '),
      );
      assert.equal(reply.status, 'read');
      await eventually(async () => {
        const deliveries = await test.gateway.webhooks.listDeliveries(operatorScope(), inbox.id, 100);
        return deliveries.every((entry) => entry.delivery.state === 'delivered') ? true : undefined;
      }, 'every delivery of the inbox done');
      assert.deepEqual(
        chatwoot.messagesIn(conversation.id).map((message) => [message.message_type, message.content]),
        [
          ['incoming', 'hi, is my order shipped?'],
          ['outgoing', 'Yes, it left this morning.'],
        ],
        'the reply is not posted back as a new message',
      );
      assert.deepEqual(chatwoot.violations, []);
    });

    it("a receipt that beats the reply's link still ticks in Chatwoot", async () => {
      const account = await seedAccount(test.gateway, { scopes: SCOPES });
      const inbox = await connectInbox(account);
      const person = uniquePhone();
      await receiveIncoming(test, account, 'did it arrive?', person);
      const conversation = await conversationOf(person);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      // WhatsApp delivering the reply before the callback has linked it: the delivered receipt is
      // recorded, and its event relayed (and found no Chatwoot message), before the link is made.
      const callbacks = test.gateway.chatwootCallbacks;
      const link = callbacks.sent.bind(callbacks);
      callbacks.sent = async (reply, messageId) => {
        const [sent] = await sentTo(account, person);
        await test.gateway.receiver.recordReceipt({
          lease: test.gateway.keeper.leaseOf(number.id)!,
          phone: number.phone,
          engineMessageId: sent!.engine_message_id!,
          status: 'delivered',
          errorCode: null,
          at: new Date(),
        });
        await eventually(async () => {
          const relayed = await test.gateway.store.db
            .selectFrom('webhook_deliveries')
            .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
            .select(['webhook_events.payload'])
            .where('webhook_deliveries.webhook_id', '=', inbox.id)
            .where('webhook_deliveries.state', '=', 'delivered')
            .execute();
          return relayed.some(({ payload }) => {
            const event = JSON.parse(payload) as { message_id?: string; status?: string };
            return event.message_id === messageId && event.status === 'delivered';
          })
            ? true
            : undefined;
        }, 'the delivered receipt relayed before the link');
        await link(reply, messageId);
      };
      try {
        const reply = await chatwoot.agentReply(conversation.id, 'Yes, this morning.');
        assert.equal((chatwoot.callbackAnswers.at(-1) as { status: number }).status, 200);
        await eventually(
          async () => (reply.statuses.includes('delivered') ? true : undefined),
          `the reply delivered in Chatwoot (${reply.statuses.join(', ')})`,
        );
        assert.deepEqual(chatwoot.violations, []);
      } finally {
        // The instance's own method was shadowed; removing the shadow restores the class's.
        delete (callbacks as { sent?: unknown }).sent;
      }
    });

    it('a reply the send refuses shows as failed in Chatwoot, with the reason', async () => {
      const account = await seedAccount(test.gateway, { scopes: SCOPES, monthlyLimit: 1 });
      await connectInbox(account);
      const person = uniquePhone();
      await receiveIncoming(test, account, 'hello?', person);
      const conversation = await conversationOf(person);
      await chatwoot.agentReply(conversation.id, 'first reply');
      const refused = await chatwoot.agentReply(conversation.id, 'second reply, over the monthly limit');
      const answer = chatwoot.callbackAnswers.at(-1) as { body: { refused?: string } };
      assert.equal(typeof answer.body.refused, 'string', JSON.stringify(answer));
      await eventually(async () => (refused.status === 'failed' ? true : undefined), 'the refused reply failed in Chatwoot');
      assert.ok(refused.external_error?.includes(answer.body.refused!), refused.external_error ?? 'no reason');
      assert.equal((await sentTo(account, person)).length, 1);
    });

    it('a reply the number cannot send now (paused: 503) is not failed; the callback again sends it', async () => {
      const account = await seedAccount(test.gateway, { scopes: SCOPES });
      await connectInbox(account);
      const person = uniquePhone();
      await receiveIncoming(test, account, 'are you there?', person);
      const conversation = await conversationOf(person);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      const pause = await test.post(`/api/numbers/${number.id}/pause`, {}, account.apiKey);
      assert.equal(pause.statusCode, 200, pause.body);
      const reply = await chatwoot.agentReply(conversation.id, 'while paused');
      const answer = chatwoot.callbackAnswers.at(-1) as { status: number; body: { error?: string } };
      assert.deepEqual([answer.status, answer.body.error], [503, 'number_paused']);
      assert.notEqual(reply.status, 'failed', "a temporary refusal is not the reply's outcome");
      const resume = await test.post(`/api/numbers/${number.id}/resume`, {}, account.apiKey);
      assert.equal(resume.statusCode, 200, resume.body);
      const again = (await chatwoot.announce(reply)) as { status: number; body: { message_id?: string } };
      assert.equal(again.status, 200, JSON.stringify(again));
      assert.equal(typeof again.body.message_id, 'string');
      assert.deepEqual(
        (await sentTo(account, person)).map((message) => message.text),
        ['while paused'],
      );
    });

    it('a callback with a wrong token, or naming another inbox, sends nothing', async () => {
      const account = await seedAccount(test.gateway, { scopes: SCOPES });
      const inbox = await connectInbox(account);
      const wrong = await test.inject({
        method: 'POST',
        url: `/chatwoot/callbacks/${inbox.id}/not-the-token`,
        payload: { event: 'message_created' },
      });
      assert.equal(wrong.statusCode, 404);
      const person = uniquePhone();
      await receiveIncoming(test, account, 'hi', person);
      const conversation = await conversationOf(person);
      const message = await chatwoot.agentReply(conversation.id, 'ok');
      const forged = { ...chatwoot.messageCreatedPayload(message), id: message.id + 1000, inbox: { id: chatwoot.inboxId + 1 } };
      const other = await test.inject({ method: 'POST', url: inbox.chatwoot.callback_path, payload: forged });
      assert.equal(other.statusCode, 400, other.body);
      assert.equal((await sentTo(account, person)).length, 1, 'only the genuine reply was sent');
    });
  });
}
