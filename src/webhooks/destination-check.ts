import { AppError } from '../domain/errors.ts';
import { isAmqpUrl, type RabbitmqTarget } from '../domain/webhooks.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { mayConnect, portOf, resolveHost, type AddressPolicy } from './address-guard.ts';

/** AMQP's own limit on exchange names and routing keys, in bytes. */
const MAX_AMQP_NAME_BYTES = 255;
/** What RabbitMQ accepts in an exchange name; the empty name is the default exchange. */
const EXCHANGE_NAME = /^[A-Za-z0-9_.:-]*$/;

/** A destination as stored: the URL shown (no password), and a RabbitMQ sink's sealed full URL and target. */
export interface CheckedDestination {
  url: string;
  sealedTarget: string | null;
  rabbitmq: RabbitmqTarget | null;
}

/**
 * Checks a destination as it is saved: an http(s) URL for a webhook, or an amqp(s) URL with an
 * exchange and routing-key template for a RabbitMQ sink; its host must resolve to an address
 * the SSRF guard lets the worker reach. The worker checks again on every connection, because
 * DNS can change after this. A broker URL holds its password, so it is sealed, and the URL
 * shown and logged has the password removed.
 */
export async function checkDestination(
  policy: AddressPolicy,
  secretBox: SecretBox,
  raw: string,
  rabbitmq: RabbitmqTarget | undefined,
): Promise<CheckedDestination> {
  const url = parseUrl(raw);
  await checkReachable(policy, url);
  if (!isAmqpUrl(url.href)) {
    if (rabbitmq !== undefined) {
      throw new AppError('invalid_request', 'rabbitmq is for a RabbitMQ sink, whose url is amqp:// or amqps://.', { field: 'rabbitmq' });
    }
    return { url: url.toString(), sealedTarget: null, rabbitmq: null };
  }
  if (rabbitmq === undefined) {
    throw new AppError('invalid_request', 'A RabbitMQ sink needs rabbitmq.exchange and rabbitmq.routing_key.', { field: 'rabbitmq' });
  }
  const full = url.toString();
  url.password = '';
  return { url: url.toString(), sealedTarget: secretBox.seal(full), rabbitmq: checkRabbitmqTarget(rabbitmq) };
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new AppError('invalid_webhook_url', `"${raw}" is not a URL; use an absolute http://, https://, amqp:// or amqps:// URL.`);
  }
  if (!['http:', 'https:', 'amqp:', 'amqps:'].includes(url.protocol)) {
    throw new AppError(
      'invalid_webhook_url',
      `Webhook URLs must use http or https (or amqp or amqps for a RabbitMQ sink), not ${url.protocol.replace(':', '')}.`,
    );
  }
  return url;
}

async function checkReachable(policy: AddressPolicy, url: URL): Promise<void> {
  let addresses: string[];
  try {
    addresses = await resolveHost(url.hostname);
  } catch {
    throw new AppError('invalid_webhook_url', `The host ${url.hostname} does not resolve.`);
  }
  const port = portOf(url);
  if (!addresses.some((address) => mayConnect(policy, address, port, url.hostname))) {
    throw new AppError(
      'webhook_url_blocked',
      `${url.hostname} resolves only to private, loopback or reserved addresses, which webhooks may not reach. An operator can allow ` +
        `one receiver by its host:port with WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS.`,
      { host: url.hostname, port, resolved_addresses: addresses },
    );
  }
}

/** An exchange name AMQP accepts and a routing-key template of a length it accepts. */
export function checkRabbitmqTarget(target: RabbitmqTarget): RabbitmqTarget {
  const exchange = target.exchange.trim();
  const routingKey = target.routingKey.trim();
  if (!EXCHANGE_NAME.test(exchange) || Buffer.byteLength(exchange) > MAX_AMQP_NAME_BYTES) {
    throw new AppError(
      'invalid_request',
      `rabbitmq.exchange may hold letters, digits, '-', '_', '.' and ':' only, at most ${MAX_AMQP_NAME_BYTES} of them; "" is the default exchange.`,
      { field: 'rabbitmq.exchange' },
    );
  }
  if (routingKey === '' || Buffer.byteLength(routingKey) > MAX_AMQP_NAME_BYTES) {
    throw new AppError('invalid_request', `rabbitmq.routing_key must be 1 to ${MAX_AMQP_NAME_BYTES} bytes.`, {
      field: 'rabbitmq.routing_key',
    });
  }
  return { exchange, routingKey };
}
