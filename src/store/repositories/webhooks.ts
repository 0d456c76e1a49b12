import {
  isMessageScope,
  type ChatwootInbox,
  type MessageScope,
  type RabbitmqTarget,
  type Webhook,
  type WebhookEventType,
} from '../../domain/webhooks.ts';
import { compiledStatement } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { WebhookRow } from '../schema-webhooks.ts';
import { scopedAccountId, type TenantScope } from '../../domain/tenant-scope.ts';

// A stream's holder and count belong to its connection, not to what the webhook is; a Chatwoot
// inbox's callback token is read only where a callback is authenticated or its path shown.
function toWebhook(row: Omit<WebhookRow, 'stream_holder' | 'stream_sent' | 'chatwoot_callback_token_ciphertext'>): Webhook {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    eventTypes: row.event_types.split(',').filter(Boolean) as WebhookEventType[],
    messageScope: isMessageScope(row.message_scope) ? row.message_scope : 'direct',
    description: row.description ?? null,
    rabbitmq:
      row.amqp_exchange == null || row.amqp_routing_key == null ? null : { exchange: row.amqp_exchange, routingKey: row.amqp_routing_key },
    chatwoot: chatwootOf(row),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    failingSince: row.failing_since === null ? null : new Date(row.failing_since),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function chatwootOf(row: Pick<WebhookRow, 'chatwoot_account_id' | 'chatwoot_inbox_id' | 'chatwoot_number'>): ChatwootInbox | null {
  if (row.chatwoot_account_id == null || row.chatwoot_inbox_id == null) return null;
  return { accountId: Number(row.chatwoot_account_id), inboxId: Number(row.chatwoot_inbox_id), number: row.chatwoot_number ?? null };
}

export interface WebhookSecrets {
  current: string;
  previous: string | null;
  previousExpiresAt: number | null;
}

/**
 * `sealedTarget` is a RabbitMQ sink's full URL or a Chatwoot inbox's API access token, sealed; null for an HTTP webhook.
 * `sealedCallbackToken` is a Chatwoot inbox's callback token, sealed.
 */
export async function insertWebhook(
  db: Executor,
  webhook: Webhook,
  sealedSecret: string,
  sealedTarget: string | null = null,
  sealedCallbackToken: string | null = null,
): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({
      id: webhook.id,
      account_id: webhook.accountId,
      url: webhook.url,
      event_types: webhook.eventTypes.join(','),
      message_scope: webhook.messageScope,
      description: webhook.description,
      target_ciphertext: sealedTarget,
      amqp_exchange: webhook.rabbitmq?.exchange ?? null,
      amqp_routing_key: webhook.rabbitmq?.routingKey ?? null,
      ...chatwootColumns(webhook.chatwoot),
      chatwoot_callback_token_ciphertext: sealedCallbackToken,
      enabled: webhook.enabled ? 1 : 0,
      secret_ciphertext: sealedSecret,
      previous_secret_ciphertext: null,
      previous_secret_expires_at: null,
      disabled_reason: null,
      failing_since: null,
      created_at: webhook.createdAt.getTime(),
      updated_at: webhook.updatedAt.getTime(),
    })
    .execute();
}

/** A webhook the scope may see; another account's is not found, so tenants never see each other. */
export async function findWebhook(db: Executor, scope: TenantScope, id: string): Promise<Webhook | undefined> {
  let query = db.selectFrom('webhooks').selectAll().where('id', '=', id);
  const accountId = scopedAccountId(scope);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.executeTakeFirst();
  return row && toWebhook(row);
}

/** A webhook by id alone, for the delivery worker's own bookkeeping; tenant reads use `findWebhook`. */
export async function findWebhookForDelivery(db: Executor, id: string): Promise<Webhook | undefined> {
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toWebhook(row);
}

export async function findWebhookSecrets(db: Executor, id: string): Promise<WebhookSecrets | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .select(['secret_ciphertext', 'previous_secret_ciphertext', 'previous_secret_expires_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  return (
    row && {
      current: row.secret_ciphertext,
      previous: row.previous_secret_ciphertext,
      previousExpiresAt: row.previous_secret_expires_at,
    }
  );
}

/**
 * What a Chatwoot inbox's callback is checked with: its callback token, sealed (null for an inbox
 * made before migration 0048, whose token is derived from its signing secrets, also here).
 */
export interface ChatwootCallbackKeys {
  sealedToken: string | null;
  secrets: WebhookSecrets;
}

function callbackKeysOf(row: {
  chatwoot_callback_token_ciphertext: string | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: number | null;
}): ChatwootCallbackKeys {
  return {
    sealedToken: row.chatwoot_callback_token_ciphertext,
    secrets: {
      current: row.secret_ciphertext,
      previous: row.previous_secret_ciphertext,
      previousExpiresAt: row.previous_secret_expires_at,
    },
  };
}

/** The webhook and its callback keys, in one read: a Chatwoot callback is checked against them. */
export async function findWebhookWithCallbackKeys(
  db: Executor,
  id: string,
): Promise<{ webhook: Webhook; keys: ChatwootCallbackKeys } | undefined> {
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  return row && { webhook: toWebhook(row), keys: callbackKeysOf(row) };
}

/** The callback keys of several webhooks in one read, by id. */
export async function findChatwootCallbackKeys(db: Executor, ids: readonly string[]): Promise<Map<string, ChatwootCallbackKeys>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhooks')
    .select(['id', 'chatwoot_callback_token_ciphertext', 'secret_ciphertext', 'previous_secret_ciphertext', 'previous_secret_expires_at'])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.id, callbackKeysOf(row)]));
}

/** Keeps the callback token in use, unless the inbox has one stored already: rotating a secret must not change it. */
export async function keepChatwootCallbackToken(db: Executor, id: string, sealedCallbackToken: string): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ chatwoot_callback_token_ciphertext: sealedCallbackToken })
    .where('id', '=', id)
    .where('chatwoot_callback_token_ciphertext', 'is', null)
    .execute();
}

export async function countWebhooks(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function listWebhooks(db: Executor, accountId: string): Promise<Webhook[]> {
  const rows = await db
    .selectFrom('webhooks')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toWebhook);
}

// Every stored message and every status change looks its account's webhooks up. The columns are
// named, not *, so that a prepared statement survives a migration adding one (ADR 0011).
const WEBHOOK_COLUMNS = [
  'id',
  'account_id',
  'url',
  'event_types',
  'enabled',
  'secret_ciphertext',
  'previous_secret_ciphertext',
  'previous_secret_expires_at',
  'disabled_reason',
  'failing_since',
  'created_at',
  'updated_at',
  'message_scope',
  'description',
  'target_ciphertext',
  'amqp_exchange',
  'amqp_routing_key',
  'chatwoot_account_id',
  'chatwoot_inbox_id',
  'chatwoot_number',
] as const;

const selectEnabledWebhooks = compiledStatement((db, v: { accountId: string }) =>
  db.selectFrom('webhooks').select(WEBHOOK_COLUMNS).where('account_id', '=', v.accountId).where('enabled', '=', 1),
);

/**
 * An enabled webhook with its sealed secrets, which a node sending a delivery from memory signs
 * with, and a RabbitMQ sink's sealed broker URL.
 */
export type EnabledWebhook = Webhook & { secrets: WebhookSecrets; sealedTarget: string | null };

export async function listEnabledWebhooks(db: Executor, accountId: string): Promise<EnabledWebhook[]> {
  return (await selectEnabledWebhooks(db, { accountId })).rows.map((row) => ({
    ...toWebhook(row),
    secrets: {
      current: row.secret_ciphertext,
      previous: row.previous_secret_ciphertext,
      previousExpiresAt: row.previous_secret_expires_at,
    },
    sealedTarget: row.target_ciphertext,
  }));
}

export interface WebhookChanges {
  url?: string;
  /** A RabbitMQ sink's new full URL, sealed; given with `url`. */
  sealedTarget?: string | null;
  rabbitmq?: RabbitmqTarget | null;
  chatwoot?: ChatwootInbox | null;
  eventTypes?: WebhookEventType[];
  messageScope?: MessageScope;
  description?: string | null;
  enabled?: boolean;
  disabledReason?: string | null;
}

function chatwootColumns(chatwoot: ChatwootInbox | null) {
  return {
    chatwoot_account_id: chatwoot?.accountId ?? null,
    chatwoot_inbox_id: chatwoot?.inboxId ?? null,
    chatwoot_number: chatwoot?.number ?? null,
  };
}

export async function updateWebhook(db: Executor, id: string, changes: WebhookChanges, at: Date): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({
      updated_at: at.getTime(),
      ...(changes.url !== undefined && { url: changes.url }),
      ...(changes.sealedTarget !== undefined && { target_ciphertext: changes.sealedTarget }),
      ...(changes.rabbitmq !== undefined && {
        amqp_exchange: changes.rabbitmq?.exchange ?? null,
        amqp_routing_key: changes.rabbitmq?.routingKey ?? null,
      }),
      ...(changes.chatwoot !== undefined && chatwootColumns(changes.chatwoot)),
      ...(changes.eventTypes !== undefined && { event_types: changes.eventTypes.join(',') }),
      ...(changes.messageScope !== undefined && { message_scope: changes.messageScope }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.enabled !== undefined && { enabled: changes.enabled ? 1 : 0 }),
      ...(changes.enabled === true && { failing_since: null }),
      ...(changes.disabledReason !== undefined && { disabled_reason: changes.disabledReason }),
    })
    .where('id', '=', id)
    .execute();
}

export async function rotateWebhookSecret(
  db: Executor,
  id: string,
  sealedSecret: string,
  previousSealedSecret: string,
  previousExpiresAt: Date,
  at: Date,
): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({
      secret_ciphertext: sealedSecret,
      previous_secret_ciphertext: previousSealedSecret,
      previous_secret_expires_at: previousExpiresAt.getTime(),
      updated_at: at.getTime(),
    })
    .where('id', '=', id)
    .execute();
}

export async function deleteWebhook(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

/**
 * Records attempts' outcomes on their webhooks' health: a success ends a failing run, and the
 * first failure after a success starts one.
 */
export async function recordWebhookHealth(db: Executor, succeededIds: string[], failedIds: string[], at: Date): Promise<void> {
  if (succeededIds.length > 0) {
    await db
      .updateTable('webhooks')
      .set({ failing_since: null })
      .where('id', 'in', succeededIds)
      .where('failing_since', 'is not', null)
      .execute();
  }
  if (failedIds.length > 0) {
    await db
      .updateTable('webhooks')
      .set({ failing_since: at.getTime() })
      .where('id', 'in', failedIds)
      .where('failing_since', 'is', null)
      .execute();
  }
}
