import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Webhook, WebhookAttempt, WebhookDelivery, WebhookEventType } from '../domain/webhooks.ts';
import {
  isMessageScope,
  isWebhookEventType,
  messageScopes,
  isAmqpUrl,
  isStreamUrl,
  streamPath,
  webhookEventTypes,
  type MessageScope,
  type RabbitmqTarget,
} from '../domain/webhooks.ts';
import { testEventPayload } from '../domain/event-payloads.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findAccountById, lockAccount } from '../store/repositories/accounts.ts';
import { findDelivery, listAttempts, listDeliveries, scheduleRedelivery } from '../store/repositories/deliveries.ts';
import * as webhooks from '../store/repositories/webhooks.ts';
import { streamProgress } from '../store/repositories/event-streams.ts';
import type { AddressPolicy } from './address-guard.ts';
import { checkDestination, checkRabbitmqTarget, type CheckedDestination } from './destination-check.ts';
import { enqueueTestEvent, type DeliveryNotifier } from './outbox.ts';
import { generateWebhookSecret } from './signing.ts';
import type { AccountScope, TenantScope } from '../domain/tenant-scope.ts';
import { SYSTEM_ACTOR, type AuditActor } from '../domain/audit.ts';
import { recordAudit } from '../audit/audit-trail.ts';
import { checkChatwootInbox, type ChatwootInboxInput } from './chatwoot-destination.ts';
import {
  acceptedChatwootCallbackTokens,
  chatwootCallbackPath,
  derivedChatwootCallbackToken,
  newChatwootCallbackToken,
} from './chatwoot-callbacks.ts';
import { chatwootEventTypes, type ChatwootInbox } from '../domain/webhooks.ts';

/** After a rotation, the old secret keeps signing alongside the new one for this long. */
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** Enough to say whose a webhook is and what for; short enough for a table. */
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;

export interface WebhookInput {
  url?: string;
  eventTypes?: string[];
  /** direct, group or all: which chats' message events it receives. */
  messageScope?: string;
  /** What it is for; null or blank clears it. */
  description?: string | null;
  enabled?: boolean;
  /** Where a RabbitMQ sink (an amqp:// or amqps:// url) publishes. */
  rabbitmq?: RabbitmqTarget;
  /** An event stream, which its client reads over a WebSocket, instead of a url (ADR 0068); only when made. */
  stream?: boolean;
  /** A Chatwoot inbox (the url is Chatwoot's base URL), ADR 0067. */
  chatwoot?: ChatwootInboxInput;
}

export interface DeliveryWithAttempts {
  delivery: WebhookDelivery;
  attempts: WebhookAttempt[];
}

/**
 * Webhooks as customers and operators manage them, through the dashboard, the API and the CLI
 * alike. Every method takes the caller's scope and acts only inside it: another account's webhook
 * or delivery is simply not found. Every change takes its actor and writes its audit row in the
 * same transaction (docs/adr/0053-audit-log.md); SYSTEM_ACTOR is for code with no person behind
 * it (tests, benchmarks).
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

  async createWebhook(
    scope: AccountScope,
    input: WebhookInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<{ webhook: Webhook; secret: string }> {
    const { accountId } = scope;
    if ((await findAccountById(this.store.db, accountId)) === undefined) {
      throw new AppError('account_not_found', `There is no account ${accountId}.`);
    }
    const now = new Date();
    const id = newId('webhook');
    if (input.stream !== true && input.url === undefined) {
      throw new AppError('invalid_request', 'A webhook needs a url (or stream: true for an event stream).', { field: 'url' });
    }
    const destination =
      input.stream === true
        ? streamDestination(id, input)
        : await checkDestination(this.addressPolicy, this.secretBox, input.url ?? '', input.rabbitmq);
    const chatwoot =
      input.chatwoot === undefined
        ? undefined
        : await this.chatwootDestination(accountId, input, input.stream === true || destination.rabbitmq !== null);
    const webhook: Webhook = {
      id,
      accountId,
      url: destination.url,
      eventTypes: parseEventTypes(input.eventTypes ?? (chatwoot === undefined ? ['message'] : chatwootEventTypes)),
      messageScope: parseMessageScope(input.messageScope ?? 'direct'),
      description: parseDescription(input.description),
      rabbitmq: destination.rabbitmq,
      chatwoot: chatwoot?.inbox ?? null,
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
      await webhooks.insertWebhook(
        trx,
        webhook,
        this.secretBox.seal(secret),
        chatwoot?.sealedToken ?? destination.sealedTarget,
        chatwoot === undefined ? null : this.secretBox.seal(newChatwootCallbackToken()),
      );
      if ((await webhooks.countWebhooks(trx, accountId)) > this.maxPerAccount) {
        throw new AppError(
          'webhook_limit_reached',
          `An account can have at most ${this.maxPerAccount} webhooks. Delete one you no longer use, or subscribe an existing one to ` +
            `more events.`,
          { limit: this.maxPerAccount },
        );
      }
      await recordAudit(trx, actor, 'webhook.created', {
        accountId,
        targetId: webhook.id,
        details: { url: webhook.url, events: webhook.eventTypes },
      });
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

  /** An event stream of the scope, for a client connecting to it; another account's is not found. */
  async getStream(scope: TenantScope, id: string): Promise<Webhook> {
    const webhook = await this.getWebhook(scope, id);
    if (!isStreamUrl(webhook.url)) {
      throw new AppError(
        'not_an_event_stream',
        `${id} delivers to ${webhook.url}; only an event stream (made with stream: true) is read here.`,
        {
          webhook_id: id,
        },
      );
    }
    return webhook;
  }

  /** An event stream of the scope and how far it has got: events sent, and events waiting for its client. */
  async streamProgress(scope: TenantScope, id: string): Promise<{ webhook: Webhook; sent: number; waiting: number }> {
    const webhook = await this.getStream(scope, id);
    return { webhook, ...(await streamProgress(this.store.db, id)) };
  }

  async updateWebhook(scope: TenantScope, id: string, input: WebhookInput, actor: AuditActor = SYSTEM_ACTOR): Promise<Webhook> {
    const before = await this.getWebhook(scope, id);
    const changes: webhooks.WebhookChanges = {
      ...(await this.destinationChanges(before, input)),
      ...(input.eventTypes !== undefined && { eventTypes: parseEventTypes(input.eventTypes) }),
      ...(input.messageScope !== undefined && { messageScope: parseMessageScope(input.messageScope) }),
      ...(input.description !== undefined && { description: parseDescription(input.description) }),
      ...(input.enabled !== undefined && { enabled: input.enabled, disabledReason: input.enabled ? null : 'Disabled by a user.' }),
    };
    await this.store.db.transaction().execute(async (trx) => {
      await webhooks.updateWebhook(trx, id, changes, new Date());
      await recordAudit(trx, actor, 'webhook.updated', {
        accountId: before.accountId,
        targetId: id,
        details: { changed: Object.keys(changes).filter((name) => name !== 'disabledReason') },
      });
    });
    await this.store.lookups.webhooksChanged(before.accountId);
    if (input.enabled) this.notifier.deliveriesQueued();
    return this.getWebhook(scope, id);
  }

  async deleteWebhook(scope: TenantScope, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Webhook> {
    const webhook = await this.getWebhook(scope, id);
    await this.store.db.transaction().execute(async (trx) => {
      await webhooks.deleteWebhook(trx, id);
      await recordAudit(trx, actor, 'webhook.deleted', { accountId: webhook.accountId, targetId: id, details: { url: webhook.url } });
    });
    await this.store.lookups.webhooksChanged(webhook.accountId);
    return webhook;
  }

  async revealSecret(scope: TenantScope, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<string> {
    const webhook = await this.getWebhook(scope, id);
    const sealed = await webhooks.findWebhookSecrets(this.store.db, id);
    // Seeing a secret is recorded as an action: whoever saw it could sign deliveries.
    await recordAudit(this.store.db, actor, 'webhook.secret_revealed', { accountId: webhook.accountId, targetId: id });
    return this.secretBox.open(sealed!.current);
  }

  /**
   * The callback path of each Chatwoot inbox among the webhooks, by webhook id, for its owner to
   * paste into Chatwoot (the dashboard and the webhooks API show it with the inbox).
   */
  async chatwootCallbackPaths(shown: Webhook[]): Promise<Map<string, string>> {
    const inboxes = shown.filter((webhook) => webhook.chatwoot !== null).map((webhook) => webhook.id);
    const keys = await webhooks.findChatwootCallbackKeys(this.store.db, inboxes);
    const paths = new Map<string, string>();
    for (const [id, inboxKeys] of keys) {
      const [token] = acceptedChatwootCallbackTokens(this.secretBox, id, inboxKeys);
      if (token !== undefined) paths.set(id, chatwootCallbackPath(id, token));
    }
    return paths;
  }

  /** A new secret; the old one keeps signing too for 24 hours, so receivers can switch over. */
  async rotateSecret(
    scope: TenantScope,
    id: string,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<{ webhook: Webhook; secret: string; previousValidUntil: Date }> {
    const webhook = await this.getWebhook(scope, id);
    const sealed = await webhooks.findWebhookSecrets(this.store.db, id);
    const secret = generateWebhookSecret();
    const now = new Date();
    const previousValidUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    await this.store.db.transaction().execute(async (trx) => {
      // An inbox whose callback token is still derived from the secret keeps the one in use.
      if (webhook.chatwoot !== null) {
        const inUse = derivedChatwootCallbackToken(id, this.secretBox.open(sealed!.current));
        await webhooks.keepChatwootCallbackToken(trx, id, this.secretBox.seal(inUse));
      }
      await webhooks.rotateWebhookSecret(trx, id, this.secretBox.seal(secret), sealed!.current, previousValidUntil, now);
      await recordAudit(trx, actor, 'webhook.secret_rotated', { accountId: webhook.accountId, targetId: id });
    });
    await this.store.lookups.webhooksChanged(webhook.accountId);
    return { webhook, secret, previousValidUntil };
  }

  async sendTestEvent(scope: TenantScope, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    const webhook = await this.getWebhook(scope, id);
    const now = new Date();
    await this.committer.run(async (trx) => {
      await enqueueTestEvent(trx, webhook, testEventPayload(now), now);
      await recordAudit(trx, actor, 'webhook.test_sent', { accountId: webhook.accountId, targetId: id });
    });
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
  async redeliver(scope: TenantScope, id: string, ofWebhookId?: string, actor: AuditActor = SYSTEM_ACTOR): Promise<WebhookDelivery> {
    const { delivery } = await this.getDelivery(scope, id);
    if (ofWebhookId !== undefined && delivery.webhookId !== ofWebhookId) {
      throw new AppError('delivery_not_found', `There is no delivery ${id} for this webhook.`);
    }
    await this.store.db.transaction().execute(async (trx) => {
      await scheduleRedelivery(trx, id, new Date());
      await recordAudit(trx, actor, 'webhook.delivery_redelivered', {
        accountId: delivery.accountId,
        targetId: id,
        details: { webhook_id: delivery.webhookId },
      });
    });
    this.notifier.deliveriesQueued();
    return (await this.getDelivery(scope, id)).delivery;
  }

  /**
   * A new URL is checked as a new webhook's is. A RabbitMQ sink's exchange and routing key may
   * change on their own; its broker URL, whose password is not shown, only by being given whole.
   */
  private async destinationChanges(before: Webhook, input: WebhookInput): Promise<webhooks.WebhookChanges> {
    if (isStreamUrl(before.url) && (input.url !== undefined || input.rabbitmq !== undefined)) {
      throw new AppError(
        'invalid_request',
        'An event stream has no url or rabbitmq: its client connects to it. Make a webhook for a URL.',
        {
          field: input.url !== undefined ? 'url' : 'rabbitmq',
        },
      );
    }
    if (input.chatwoot !== undefined || before.chatwoot !== null) return this.chatwootChanges(before, input);
    // A form that sends back a sink's URL as shown (without its password) keeps the sealed one.
    if (input.url !== undefined && before.rabbitmq !== null && sameUrl(input.url, before.url)) {
      return this.destinationChanges(before, { ...input, url: undefined });
    }
    if (input.url === undefined) {
      if (input.rabbitmq === undefined) return {};
      if (before.rabbitmq === null) {
        throw new AppError('invalid_request', 'rabbitmq is for a RabbitMQ sink, whose url is amqp:// or amqps://.', { field: 'rabbitmq' });
      }
      return { rabbitmq: checkRabbitmqTarget(input.rabbitmq) };
    }
    const rabbitmq = input.rabbitmq ?? (isAmqpUrl(input.url) ? (before.rabbitmq ?? undefined) : undefined);
    const destination = await checkDestination(this.addressPolicy, this.secretBox, input.url, rabbitmq);
    return { url: destination.url, sealedTarget: destination.sealedTarget, rabbitmq: destination.rabbitmq };
  }

  /** A Chatwoot inbox's ids, its number, and its access token sealed; its base URL was checked as a webhook's. */
  private async chatwootDestination(
    accountId: string,
    input: WebhookInput,
    isSink: boolean,
  ): Promise<{ inbox: ChatwootInbox; sealedToken: string | undefined }> {
    if (isSink) throw new AppError('invalid_request', "A Chatwoot inbox's url is Chatwoot's http(s) base URL.", { field: 'url' });
    const checked = await checkChatwootInbox(this.store.db, accountId, input.chatwoot!, true);
    return { inbox: checked.inbox, sealedToken: checked.apiAccessToken && this.secretBox.seal(checked.apiAccessToken) };
  }

  /** A Chatwoot inbox stays one: its base URL, ids, number and token may change, each on its own. */
  private async chatwootChanges(before: Webhook, input: WebhookInput): Promise<webhooks.WebhookChanges> {
    if (before.chatwoot === null) {
      throw new AppError('invalid_request', 'chatwoot is for a Chatwoot inbox; create one with chatwoot to make one.', {
        field: 'chatwoot',
      });
    }
    if (input.rabbitmq !== undefined) throw new AppError('invalid_request', 'A Chatwoot inbox has no rabbitmq.', { field: 'rabbitmq' });
    const url =
      input.url === undefined ? undefined : (await checkDestination(this.addressPolicy, this.secretBox, input.url, undefined)).url;
    // The stored token goes only to the host it was given for: a new base URL comes with the token
    // again, or whoever may edit the inbox could have it sent to a server of theirs.
    if (url !== undefined && url !== before.url && input.chatwoot?.apiAccessToken === undefined) {
      throw new AppError(
        'invalid_request',
        "A Chatwoot inbox's new base URL needs chatwoot.api_access_token with it: the stored token is sent only to the URL it was given for.",
        { field: 'chatwoot.api_access_token' },
      );
    }
    if (input.chatwoot === undefined) return url === undefined ? {} : { url };
    const merged = { ...before.chatwoot, ...input.chatwoot };
    const checked = await checkChatwootInbox(this.store.db, before.accountId, merged, false);
    return {
      ...(url !== undefined && { url }),
      chatwoot: checked.inbox,
      ...(checked.apiAccessToken !== undefined && { sealedTarget: this.secretBox.seal(checked.apiAccessToken) }),
    };
  }
}

/** An event stream's destination: the path its client connects to, and nothing else given. */
function streamDestination(id: string, input: WebhookInput): CheckedDestination {
  const extra = input.url !== undefined ? 'url' : input.rabbitmq !== undefined ? 'rabbitmq' : undefined;
  if (extra !== undefined) {
    throw new AppError('invalid_request', `An event stream takes no ${extra}: its client connects to it (stream: true, or a url).`, {
      field: extra,
    });
  }
  return { url: streamPath(id), sealedTarget: null, rabbitmq: null };
}

function sameUrl(given: string, shown: string): boolean {
  try {
    return new URL(given.trim()).toString() === shown;
  } catch {
    return false;
  }
}

function parseDescription(description: string | null | undefined): string | null {
  const trimmed = description?.trim() ?? '';
  if (trimmed.length > MAX_WEBHOOK_DESCRIPTION_LENGTH)
    throw new AppError('invalid_request', `description can be at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters.`, {
      field: 'description',
      problem: 'too_long',
    });
  return trimmed === '' ? null : trimmed;
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
