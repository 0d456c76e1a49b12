import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectInbox } from '../../support/chatwoot-inbox.ts';
import { ChatwootStandIn } from '../../support/chatwoot-stand-in.ts';
import { dialects } from '../../support/databases.ts';
import { eventually, receiveIncoming, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

// An agent's reply in Chatwoot passes the send governor as any send does (issue 44: "the governor,
// the quota, Idempotency-Key … apply"): a governed number that may not send now keeps the reply in
// its queue, durably, and lets it go when it may; the reply's ticks follow in Chatwoot then. The
// number is paused to make it wait, which a governed number answers by queueing (202, "paused")
// rather than refusing, so the test waits on the resume, not on a clock.

for (const dialect of dialects) {
  describe(`an agent's reply in Chatwoot passes the send governor (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let chatwoot: ChatwootStandIn;

    before(async () => {
      // The queue's runner, which production's node runtime starts, looks for due messages every 200 ms.
      test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_SEND_QUEUE_CHECK_MS: '200' }));
      test.gateway.queueRunner.start();
      account = await seedAccount(test.gateway, { scopes: ['read', 'send', 'webhooks'] });
      chatwoot = await ChatwootStandIn.start();
      await connectInbox(test, account, chatwoot);
    });
    after(async () => {
      await test.close();
      await chatwoot.close();
    });

    async function numberAction(method: 'PATCH' | 'POST', path: string, body: unknown) {
      const response = await test.inject({
        method,
        url: `/api/numbers/${encodeURIComponent(account.phones[0]!)}${path}`,
        headers: { authorization: `Bearer ${account.apiKey}` },
        payload: body as Record<string, unknown>,
      });
      assert.equal(response.statusCode, 200, response.body);
    }

    it('a reply the policy holds waits in the number’s queue, leaves when the number may send, and its ticks follow then', async () => {
      const person = uniquePhone();
      await receiveIncoming(test, account, 'when does the shop open?', person);
      const conversation = await eventually(async () => {
        const contact = chatwoot.contacts.find((candidate) => candidate.phone_number === person);
        return contact && chatwoot.conversations.find((candidate) => candidate.contactId === contact.id);
      }, "the person's conversation in Chatwoot");
      await numberAction('PATCH', '', { send_policy: { per_day: 1000 } });
      await numberAction('POST', '/pause', { reason: 'held while the test replies' });

      const reply = await chatwoot.agentReply(conversation.id, 'At nine.');
      const answer = chatwoot.callbackAnswers.at(-1) as { status: number; body: { message_id?: string } };
      assert.equal(answer.status, 200, JSON.stringify(answer));
      const rowOf = async () =>
        test.gateway.store.db
          .selectFrom('messages')
          .select(['id', 'status', 'to_phone', 'text'])
          .where('account_id', '=', account.accountId)
          .where('direction', '=', 'outbound')
          .execute();
      assert.deepEqual(
        await rowOf(),
        [{ id: answer.body.message_id, status: 'queued', to_phone: person, text: 'At nine.' }],
        "kept in the number's queue, not sent and not refused",
      );

      await numberAction('POST', '/resume', {});
      await eventually(
        async () => (reply.statuses.includes('delivered') ? true : undefined),
        `the reply delivered in Chatwoot once it left (${reply.statuses.join(', ')})`,
      );
      // Ticks reach Chatwoot only through the outbox, so only now could a 'failed' among them be seen.
      assert.ok(!reply.statuses.includes('failed'), `never shown failed while it waited (${reply.statuses.join(', ')})`);
      const [sent, ...others] = await rowOf();
      assert.equal(others.length, 0, 'sent once');
      assert.ok(sent !== undefined && sent.status !== 'queued', JSON.stringify(sent));
      assert.deepEqual(chatwoot.violations, []);
    });
  });
}
