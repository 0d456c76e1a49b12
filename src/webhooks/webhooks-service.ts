import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Webhook, WebhookAttempt, WebhookDelivery, WebhookEventType } from '../domain/webhooks.ts';
import {
  isMessageScope,
  isWebhookEventType,
  messageScopes,
  testEventPayload,
  webhookEventTypes,
  type MessageScope,
} from '../domain/webhooks.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findAccountById, lockAccount } from '../store/repositories/accounts.ts';
import { findDelivery, listAttempts, listDeliveries, scheduleRedelivery } from '../store/repositories/deliveries.ts';
import * as webhooks from '../store/repositories/webhooks.ts';
import { mayConnect, portOf, resolveHost, type AddressPolicy } from './address-guard.ts';
import { enqueueTestEvent, type DeliveryNotifier } from './outbox.ts';
import { generateWebhookSecret } from './signing.ts';
import type { AccountScope, TenantScope } from '../domain/tenant-scope.ts';

/** After a rotation, the old secret keeps signing alongside the new one for this long. */
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface WebhookInput {
  url?: string;
  eventTypes?: string[];
  /** direct, group or all: which chats' message events it receives. */
  messageScope?: string;
  enabled?: boolean;
}

export interface DeliveryWithAttempts {
  delivery: WebhookDelivery;
  attempts: WebhookAttempt[];
}

/**
 * Webhooks as customers and operators manage them. Every method takes the caller's scope and
 * acts only inside it: another account's webhook or delivery is simply not found.
 */
export class WebhooksService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly secretBox: SecretBox,
    private readonly notifier: DeliveryNotifier,
    private readonly addressPolicy: AddressPolicy,
    /** How many webhooks one account may have: each one multiplies every event into requests. */
    private readonly maxPerAccount: number,
  ) {}

  async createWebhook(scope: AccountScope, input: WebhookInput): Promise<{ webhook: Webhook; secret: string }> {
    const { accountId } = scope;
    if ((await findAccountById(this.store.db, accountId)) === undefined) {
      throw new AppError('account_not_found', `There is no account ${accountId}.`);
    }
    const now = new Date();
    const webhook: Webhook = {
      id: newId('webhook'),
      accountId,
      url: await this.checkUrl(input.url ?? ''),
      eventTypes: parseEventTypes(input.eventTypes ?? ['message']),
      messageScope: parseMessageScope(input.messageScope ?? 'direct'),
      enabled: input.enabled ?? true,
      disabledReason: null,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
    };
    const secret = generateWebhookSecret();
    await this.store.db.transaction().execute(async (trx) => {
      // Counted under the account's lock (PostgreSQL) and after the insert, in one transaction:
      // two creations at the cap cannot both pass, and on SQLite the transaction's first
      // statement is a write, so it waits for the write lock instead of failing to upgrade a read.
      await lockAccount(trx, this.store.dialect, accountId);
      await webhooks.insertWebhook(trx, webhook, this.secretBox.seal(secret));
      if ((await webhooks.countWebhooks(trx, accountId)) > this.maxPerAccount) {
        throw new AppError(
          'webhook_limit_reached',
          `An account can have at most ${this.maxPerAccount} webhooks. Delete one you no longer use, or subscribe an existing one to ` +
            `more events.`,
          { limit: this.maxPerAccount },
        );
      }
    });
    await this.store.lookups.webhooksChanged(accountId);
    return { webhook, secret };
  }

  listWebhooks(scope: AccountScope): Promise<Webhook[]> {
    return webhooks.listWebhooks(this.store.db, scope.accountId);
  }

  async getWebhook(scope: TenantScope, id: string): Promise<Webhook> {
    const webhook = await webhooks.findWebhook(this.store.db, scope, id);
    if (webhook === undefined) throw new AppError('webhook_not_found', `There is no webhook ${id}.`);
    return webhook;
  }

  async updateWebhook(scope: TenantScope, id: string, input: WebhookInput): Promise<Webhook> {
    const before = await this.getWebhook(scope, id);
    await webhooks.updateWebhook(
      this.store.db,
      id,
      {
        ...(input.url !== undefined && { url: await this.checkUrl(input.url) }),
        ...(input.eventTypes !== undefined && { eventTypes: parseEventTypes(input.eventTypes) }),
        ...(input.messageScope !== undefined && { messageScope: parseMessageScope(input.messageScope) }),
        ...(input.enabled !== undefined && { enabled: input.enabled, disabledReason: input.enabled ? null : 'Disabled by a user.' }),
      },
      new Date(),
    );
    await this.store.lookups.webhooksChanged(before.accountId);
    if (input.enabled) this.notifier.deliveriesQueued();
    return this.getWebhook(scope, id);
  }

  async deleteWebhook(scope: TenantScope, id: string): Promise<Webhook> {
    const webhook = await this.getWebhook(scope, id);
    await webhooks.deleteWebhook(this.store.db, id);
    await this.store.lookups.webhooksChanged(webhook.accountId);
    return webhook;
  }

  async revealSecret(scope: TenantScope, id: string): Promise<string> {
    await this.getWebhook(scope, id);
    const sealed = await webhooks.findWebhookSecrets(this.store.db, id);
    return this.secretBox.open(sealed!.current);
  }

  /** A new secret; the old one keeps signing too for 24 hours, so receivers can switch over. */
  async rotateSecret(scope: TenantScope, id: string): Promise<{ webhook: Webhook; secret: string; previousValidUntil: Date }> {
    const webhook = await this.getWebhook(scope, id);
    const sealed = await webhooks.findWebhookSecrets(this.store.db, id);
    const secret = generateWebhookSecret();
    const now = new Date();
    const previousValidUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    await webhooks.rotateWebhookSecret(this.store.db, id, this.secretBox.seal(secret), sealed!.current, previousValidUntil, now);
    await this.store.lookups.webhooksChanged(webhook.accountId);
    return { webhook, secret, previousValidUntil };
  }

  async sendTestEvent(scope: TenantScope, id: string): Promise<void> {
    const webhook = await this.getWebhook(scope, id);
    const now = new Date();
    await this.committer.run((trx) => enqueueTestEvent(trx, webhook, testEventPayload(now), now));
    this.notifier.deliveriesQueued();
  }

  async listDeliveries(scope: TenantScope, webhookId: string, limit = 50): Promise<DeliveryWithAttempts[]> {
    await this.getWebhook(scope, webhookId);
    const deliveries = await listDeliveries(this.store.db, webhookId, limit);
    return Promise.all(deliveries.map(async (delivery) => ({ delivery, attempts: await listAttempts(this.store.db, delivery.id) })));
  }

  async getDelivery(scope: TenantScope, id: string): Promise<DeliveryWithAttempts> {
    const delivery = await findDelivery(this.store.db, scope, id);
    if (delivery === undefined) throw new AppError('delivery_not_found', `There is no delivery ${id}.`);
    return { delivery, attempts: await listAttempts(this.store.db, id) };
  }

  /**
   * Sends a delivery again now, whatever its state, with the same webhook-id. Given the webhook
   * a caller named beside the delivery (a URL that holds both), a delivery of another webhook is
   * not found through it.
   */
  async redeliver(scope: TenantScope, id: string, ofWebhookId?: string): Promise<WebhookDelivery> {
    const { delivery } = await this.getDelivery(scope, id);
    if (ofWebhookId !== undefined && delivery.webhookId !== ofWebhookId) {
      throw new AppError('delivery_not_found', `There is no delivery ${id} for this webhook.`);
    }
    await scheduleRedelivery(this.store.db, id, new Date());
    this.notifier.deliveriesQueued();
    return (await this.getDelivery(scope, id)).delivery;
  }

  /**
   * A webhook URL must be http(s), and its host must resolve to at least one address the
   * delivery worker may reach. The worker checks again on every connection, because DNS can
   * change after this.
   */
  private async checkUrl(raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      throw new AppError('invalid_webhook_url', `"${raw}" is not a URL; use an absolute http:// or https:// URL.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new AppError('invalid_webhook_url', `Webhook URLs must use http or https, not ${url.protocol.replace(':', '')}.`);
    }
    let addresses: string[];
    try {
      addresses = await resolveHost(url.hostname);
    } catch {
      throw new AppError('invalid_webhook_url', `The host ${url.hostname} does not resolve.`);
    }
    const port = portOf(url);
    if (!addresses.some((address) => mayConnect(this.addressPolicy, address, port, url.hostname))) {
      throw new AppError(
        'webhook_url_blocked',
        `${url.hostname} resolves only to private, loopback or reserved addresses, which webhooks may not reach. An operator can allow ` +
          `one receiver by its host:port with WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS.`,
        { host: url.hostname, port, resolved_addresses: addresses },
      );
    }
    return url.toString();
  }
}

function parseMessageScope(scope: string): MessageScope {
  if (!isMessageScope(scope))
    throw new AppError(
      'invalid_request',
      `message_scope must be one of ${messageScopes.join(', ')}: whether the webhook receives direct chats' messages, groups', or both.`,
      { field: 'message_scope' },
    );
  return scope;
}

function parseEventTypes(eventTypes: string[]): WebhookEventType[] {
  const cleaned = [...new Set(eventTypes.map((type) => type.trim()).filter(Boolean))];
  if (cleaned.length === 0) throw new AppError('invalid_event_type', 'A webhook needs at least one event type.');
  const unknown = cleaned.filter((type) => !isWebhookEventType(type));
  if (unknown.length > 0) {
    throw new AppError('invalid_event_type', `Unknown event type ${unknown.join(', ')}; use ${webhookEventTypes.join(', ')}.`);
  }
  return cleaned as WebhookEventType[];
}
