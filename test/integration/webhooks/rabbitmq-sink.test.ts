import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type ChannelModel, type GetMessage } from 'amqplib';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { eventually, receiveIncoming, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';
import { ThrowawayRabbitmq } from '../../support/rabbitmq.ts';

const EXCHANGE = 'wagw.events';

/** Every message the queue holds, taken off it: what a consumer would have read. */
async function drain(connection: ChannelModel, queue: string): Promise<GetMessage[]> {
  const channel = await connection.createChannel();
  const messages: GetMessage[] = [];
  for (let message = await channel.get(queue, { noAck: true }); message !== false; message = await channel.get(queue, { noAck: true })) {
    messages.push(message);
  }
  await channel.close();
  return messages;
}

/** The texts in the order they arrived, each message_id counted once, as a deduplicating consumer keeps them. */
function deduplicated(messages: GetMessage[]): string[] {
  const seen = new Set<string>();
  const texts: string[] = [];
  for (const message of messages) {
    if (seen.has(message.properties.messageId as string)) continue;
    seen.add(message.properties.messageId as string);
    texts.push(String((JSON.parse(message.content.toString()) as { message: string }).message));
  }
  return texts;
}

// One broker for the whole file: a start costs seconds of Erlang VM.
let broker: ThrowawayRabbitmq;
let consumer: ChannelModel;
before(async () => {
  broker = await ThrowawayRabbitmq.start();
  consumer = await connect(broker.url);
  const channel = await consumer.createChannel();
  await channel.assertExchange(EXCHANGE, 'topic', { durable: true });
  await channel.close();
});
after(async () => {
  await consumer?.close().catch(() => undefined);
  await broker?.close();
});

for (const dialect of dialects) {
  describe(`a RabbitMQ sink delivers every event through the outbox (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      // Retries for half a minute, so a broker stopped for a few seconds on a busy machine is
      // still being retried when it comes back, as a webhook endpoint would be.
      test = await startDeliveringGateway(
        dialect,
        webhookEnv({ WAGW_WEBHOOK_TIMEOUT_MS: '10000', WAGW_WEBHOOK_RETRY_SCHEDULE: Array(30).fill('1').join(',') }),
      );
      account = await seedAccount(test.gateway);
    });
    after(async () => {
      await test.close();
    });

    /** A durable queue bound to the sink's routing keys, and a sink that publishes to it. */
    async function sinkWithQueue(name: string) {
      const queue = `${name}.${dialect}.${uniquePhone()}`;
      const channel = await (await reconnect()).createChannel();
      await channel.assertQueue(queue, { durable: true });
      await channel.bindQueue(queue, EXCHANGE, `${queue}.#`);
      await channel.close();
      const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: broker.url,
        eventTypes: ['message'],
        rabbitmq: { exchange: EXCHANGE, routingKey: `${queue}.{event}.{number}` },
      });
      return { queue, webhook };
    }

    async function allDelivered(webhookId: string, count: number) {
      return eventually(async () => {
        const deliveries = (await test.gateway.webhooks.listDeliveries(operatorScope(), webhookId, 1000)).map((entry) => entry.delivery);
        return deliveries.length === count && deliveries.every((delivery) => delivery.state === 'delivered') ? deliveries : undefined;
      }, `${count} deliveries confirmed by the broker`);
    }

    it('each confirmed event is in the queue once, persistent, with its event id as message_id, in order per number', async () => {
      const { queue, webhook } = await sinkWithQueue('steady');
      assert.equal(webhook.url, `amqp://guest@127.0.0.1:${broker.port}`, 'the password is not shown');
      // An edit form sends the URL back as shown; the sealed URL with its password is kept.
      await test.gateway.webhooks.updateWebhook(accountScope(account.accountId), webhook.id, { url: webhook.url, eventTypes: ['message'] });
      const sent = Array.from({ length: 12 }, (_, index) => `steady ${index}`);
      const from = uniquePhone();
      for (const text of sent) await receiveIncoming(test, account, text, from);
      const deliveries = await allDelivered(webhook.id, sent.length);

      const messages = await drain(consumer, queue);
      assert.equal(messages.length, sent.length, 'one message per confirmed delivery, none twice');
      assert.deepEqual(
        new Set(messages.map((message) => message.properties.messageId)),
        new Set(deliveries.map((delivery) => delivery.eventId)),
      );
      assert.deepEqual(deduplicated(messages), sent, 'in the order the number received them');
      for (const message of messages) {
        assert.equal(message.properties.deliveryMode, 2, 'persistent');
        assert.equal(message.fields.routingKey, `${queue}.message.${account.phones[0]}`);
        assert.equal((JSON.parse(message.content.toString()) as { webhook_id: string }).webhook_id, webhook.id);
      }
    });

    it('a broker restart mid-stream loses no event, and a consumer deduplicating by message_id sees each once, in order', async () => {
      const { queue, webhook } = await sinkWithQueue('restart');
      const sent = Array.from({ length: 16 }, (_, index) => `restart ${index}`);
      const from = uniquePhone();
      for (const text of sent.slice(0, 8)) await receiveIncoming(test, account, text, from);
      const restarting = broker.restart();
      for (const text of sent.slice(8)) await receiveIncoming(test, account, text, from);
      await restarting;
      await allDelivered(webhook.id, sent.length);
      const messages = await drain(await reconnect(), queue);
      assert.deepEqual(new Set(deduplicated(messages)), new Set(sent), 'every event, whatever was retried');
      assert.ok(messages.length >= sent.length);
    });

    it('a broker that is down is retried like a webhook endpoint until it confirms', async () => {
      const { queue, webhook } = await sinkWithQueue('down');
      await broker.stopApp();
      await receiveIncoming(test, account, 'while down');
      const failed = await eventually(async () => {
        const [entry] = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
        return entry !== undefined && entry.attempts.length > 0 ? entry : undefined;
      }, 'an attempt against the stopped broker');
      assert.notEqual(failed.attempts[0]!.error, null);
      await broker.startApp();
      await allDelivered(webhook.id, 1);
      assert.deepEqual(deduplicated(await drain(await reconnect(), queue)), ['while down']);
    });
  });
}

/** The consumer's connection, made again if a broker restart closed it. */
async function reconnect(): Promise<ChannelModel> {
  try {
    const channel = await consumer.createChannel();
    await channel.close();
  } catch {
    consumer = await connect(broker.url);
  }
  return consumer;
}
