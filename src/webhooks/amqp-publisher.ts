import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { AddressPolicy } from './address-guard.ts';
import { allowedAddresses, BlockedAddressError, portOf } from './address-guard.ts';
import type { AttemptResult } from './webhook-http.ts';

/** One publish to a RabbitMQ sink: where, what, and the ids a consumer deduplicates by. */
export interface AmqpPublish {
  /** The full broker URL, password included (opened from its sealed form just before). */
  url: string;
  exchange: string;
  routingKey: string;
  body: string;
  /** The outbox event's id, sent as the AMQP message_id. */
  messageId: string;
  headers: Record<string, string>;
}

interface BrokerLink {
  connection: ChannelModel;
  channel: ConfirmChannel;
}

/**
 * Publishes deliveries to RabbitMQ sinks: one connection and one confirm channel per broker
 * URL, so publishes to a broker go out in the order the worker starts them. A message is
 * persistent and mandatory, and an attempt succeeds only when the broker confirms it: a nack,
 * an unroutable return, a closed channel or a timeout fails it, and the worker retries it as it
 * would a webhook's. Connections pass the SSRF guard as webhooks' do, dialling an address the
 * policy allows. It never throws; every outcome is an AttemptResult.
 */
export class AmqpPublisher {
  private readonly links = new Map<string, Promise<BrokerLink>>();
  /** Deliveries the broker returned as unroutable, by delivery id, until their confirm arrives. */
  private readonly returned = new Set<string>();

  constructor(private readonly options: { timeoutMs: number; addressPolicy: AddressPolicy }) {}

  async publish(message: AmqpPublish, deliveryId: string): Promise<AttemptResult> {
    const startedAt = performance.now();
    const finish = (error: AttemptResult['error'], errorDetail: string | null): AttemptResult => ({
      statusCode: null,
      responseExcerpt: error === null ? 'confirmed by the broker' : null,
      error,
      errorDetail,
      durationMs: Math.round(performance.now() - startedAt),
      retryAfterMs: null,
      brokerAnswered: error === null || error === 'nacked' || error === 'unroutable',
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PublishTimeout()), this.options.timeoutMs);
    });
    try {
      const link = await Promise.race([this.linkTo(message.url), deadline]);
      await Promise.race([this.confirmed(link.channel, message, deliveryId), deadline]);
      if (this.returned.delete(deliveryId)) return finish('unroutable', `No queue is bound to ${message.routingKey} on the exchange.`);
      return finish(null, null);
    } catch (error) {
      this.returned.delete(deliveryId);
      return finish(...classify(error));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes every broker connection; publishes in flight fail and are retried after a restart. */
  close(): void {
    for (const link of this.links.values()) link.then((opened) => opened.connection.close()).catch(() => undefined);
    this.links.clear();
  }

  private confirmed(channel: ConfirmChannel, message: AmqpPublish, deliveryId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      channel.publish(
        message.exchange,
        message.routingKey,
        Buffer.from(message.body),
        {
          persistent: true,
          mandatory: true,
          messageId: message.messageId,
          contentType: 'application/json',
          headers: { ...message.headers, 'x-wagw-delivery-id': deliveryId },
        },
        (error: unknown) => (error ? reject(error) : resolve()),
      );
    });
  }

  private linkTo(url: string): Promise<BrokerLink> {
    let link = this.links.get(url);
    if (link === undefined) {
      link = this.open(url);
      this.links.set(url, link);
      // A link that could not be made is forgotten, so the next attempt dials again.
      link.catch(() => this.forget(url, link!));
    }
    return link;
  }

  private forget(url: string, link: Promise<BrokerLink>): void {
    if (this.links.get(url) === link) this.links.delete(url);
  }

  private async open(url: string): Promise<BrokerLink> {
    const target = new URL(url);
    const [address] = await allowedAddresses(this.options.addressPolicy, target.hostname, portOf(target), target.hostname);
    const secure = target.protocol === 'amqps:';
    const vhost = decodeURIComponent(target.pathname.slice(1)) || '/';
    const connection = await connect(
      {
        protocol: secure ? 'amqps' : 'amqp',
        hostname: address!.address,
        port: portOf(target),
        username: decodeURIComponent(target.username) || 'guest',
        password: decodeURIComponent(target.password) || 'guest',
        vhost,
        heartbeat: 30,
      },
      // The guard chose the address; TLS still checks the certificate against the URL's host.
      { timeout: this.options.timeoutMs, ...(secure && { servername: target.hostname }) },
    );
    const channel = await connection.createConfirmChannel();
    const link = Promise.resolve({ connection, channel });
    channel.on('return', (returned: { properties: { headers?: Record<string, unknown> } }) => {
      const deliveryId = returned.properties.headers?.['x-wagw-delivery-id'];
      if (typeof deliveryId === 'string') this.returned.add(deliveryId);
    });
    // A closed channel or connection (a broker restart, a refused publish) drops the link; its
    // unconfirmed publishes fail with it, and the next attempt connects again.
    const drop = () => {
      if (this.links.get(url) !== undefined)
        void this.links.get(url)!.then((current) => current.channel === channel && this.links.delete(url));
      connection.close().catch(() => undefined);
    };
    channel.on('close', drop);
    channel.on('error', () => undefined);
    connection.on('close', drop);
    connection.on('error', () => undefined);
    return link;
  }
}

class PublishTimeout extends Error {}

function classify(error: unknown): [AttemptResult['error'], string] {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof PublishTimeout) return ['timeout', 'The broker did not confirm in time.'];
  if (error instanceof BlockedAddressError) return ['blocked_address', detail];
  const code = (error as { code?: string }).code;
  if (code === 'ECONNREFUSED') return ['refused', detail];
  if (code === 'ECONNRESET' || code === 'EPIPE') return ['reset', detail];
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return ['dns', detail];
  if (detail === 'message nacked') return ['nacked', detail];
  return ['network', detail];
}
