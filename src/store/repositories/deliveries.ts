import type { DeliveredEventType, DeliveryState, WebhookAttempt, WebhookDelivery } from '../../domain/webhooks.ts';
import { sql } from 'kysely';
import type { Executor } from '../database.ts';

export interface NewEvent {
  id: string;
  accountId: string;
  eventType: DeliveredEventType;
  payload: string;
  createdAt: Date;
}

export async function insertEvent(db: Executor, event: NewEvent): Promise<void> {
  await db
    .insertInto('webhook_events')
    .values({
      id: event.id,
      account_id: event.accountId,
      event_type: event.eventType,
      payload: event.payload,
      created_at: event.createdAt.getTime(),
    })
    .execute();
}

export async function insertDeliveries(
  db: Executor,
  deliveries: { id: string; eventId: string; webhookId: string; accountId: string; at: Date }[],
): Promise<void> {
  if (deliveries.length === 0) return;
  await db
    .insertInto('webhook_deliveries')
    .values(
      deliveries.map((delivery) => ({
        id: delivery.id,
        event_id: delivery.eventId,
        webhook_id: delivery.webhookId,
        account_id: delivery.accountId,
        state: 'pending',
        attempt_count: 0,
        next_attempt_at: delivery.at.getTime(),
        claimed_until: null,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        created_at: delivery.at.getTime(),
        updated_at: delivery.at.getTime(),
      })),
    )
    .execute();
}

/** Everything the worker needs to make one attempt, sealed secrets included. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  url: string;
  eventType: DeliveredEventType;
  payload: string;
  attemptCount: number;
  createdAt: number;
  sealedSecret: string;
  sealedPreviousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** The lease this claim set; an outcome is written only while the lease is still this one. */
  leaseUntil: number;
}

/** Per-webhook selects joined into one statement, well under SQLite's limit on compound selects. */
const WEBHOOKS_PER_STATEMENT = 50;

export interface ClaimOptions {
  now: number;
  leaseUntil: number;
  limit: number;
  /** At most this many per webhook in one claim: one endpoint's backlog cannot fill a batch. */
  perWebhookLimit: number;
  /** Webhooks with requests in flight, and how many more each may take now (0: none). */
  freeSlotsByWebhook: Map<string, number>;
}

/**
 * Claims due deliveries of enabled webhooks by setting a lease. The conditional update is the
 * claim itself: of two workers racing for a row, the second finds the lease already set and
 * skips it. A worker that dies mid-attempt lets its lease lapse, and the delivery is claimed
 * again: at least once, never lost.
 *
 * Work is chosen per webhook, never by walking the queue: each webhook with due work is found
 * and read through the (state, webhook_id, next_attempt_at) index. A claim therefore costs the
 * same however large any one endpoint's backlog is, and a hanging endpoint's queue, however
 * deep, is never read while its slots are full.
 */
export async function claimDueDeliveries(db: Executor, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const shares = planShares(await webhooksWithDueWork(db, options.now), options);
  if (shares.length === 0) return [];
  const candidates: { id: string }[] = [];
  for (let offset = 0; offset < shares.length; offset += WEBHOOKS_PER_STATEMENT) {
    candidates.push(...(await oldestDueOfEach(db, shares.slice(offset, offset + WEBHOOKS_PER_STATEMENT), options.now)));
  }
  if (candidates.length === 0) return [];

  const claimed = await db
    .updateTable('webhook_deliveries')
    .set({ claimed_until: options.leaseUntil })
    .where('id', 'in', candidates.map((row) => row.id))
    // Everything the candidates were chosen by is checked again here, where it counts: a row
    // another worker claimed or finished since the select is left alone.
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', options.now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', options.now)]))
    .returning('id')
    .execute();
  if (claimed.length === 0) return [];
  const rows = await db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select([
      'webhook_deliveries.id',
      'webhook_deliveries.webhook_id',
      'webhook_deliveries.attempt_count',
      'webhook_deliveries.created_at',
      'webhooks.url',
      'webhooks.secret_ciphertext',
      'webhooks.previous_secret_ciphertext',
      'webhooks.previous_secret_expires_at',
      'webhook_events.event_type',
      'webhook_events.payload',
    ])
    .where('webhook_deliveries.id', 'in', claimed.map((row) => row.id))
    .orderBy('webhook_deliveries.next_attempt_at')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    webhookId: row.webhook_id,
    url: row.url,
    eventType: row.event_type as DeliveredEventType,
    payload: row.payload,
    attemptCount: row.attempt_count,
    createdAt: row.created_at,
    sealedSecret: row.secret_ciphertext,
    sealedPreviousSecret: row.previous_secret_ciphertext,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    leaseUntil: options.leaseUntil,
  }));
}

interface WebhookWithDueWork {
  webhook_id: string;
  oldest_due_at: number;
}

/**
 * Every enabled webhook with a due delivery that no one holds, and its oldest such delivery's
 * time. The webhooks with pending deliveries are listed by skipping through the index from one
 * webhook id to the next (one seek each, as PostgreSQL has no skip scan of its own), so the
 * cost follows the number of webhooks with work, not the number of deliveries queued.
 */
async function webhooksWithDueWork(db: Executor, now: number): Promise<WebhookWithDueWork[]> {
  const result = await sql<WebhookWithDueWork>`
    with recursive pending_webhooks(webhook_id) as (
      select (select webhook_id from webhook_deliveries where state = 'pending' order by webhook_id limit 1)
      union all
      select (
        select next_webhook.webhook_id from webhook_deliveries next_webhook
        where next_webhook.state = 'pending' and next_webhook.webhook_id > pending_webhooks.webhook_id
        order by next_webhook.webhook_id limit 1
      )
      from pending_webhooks where pending_webhooks.webhook_id is not null
    )
    select due.webhook_id, due.oldest_due_at from (
      select pending_webhooks.webhook_id, (
        select oldest.next_attempt_at from webhook_deliveries oldest
        where oldest.state = 'pending' and oldest.webhook_id = pending_webhooks.webhook_id
          and oldest.next_attempt_at <= ${now}
          and (oldest.claimed_until is null or oldest.claimed_until < ${now})
        order by oldest.next_attempt_at limit 1
      ) as oldest_due_at
      from pending_webhooks
      inner join webhooks on webhooks.id = pending_webhooks.webhook_id
      where webhooks.enabled = 1
    ) as due
    where due.oldest_due_at is not null
    order by due.oldest_due_at`.execute(db);
  return result.rows.map((row) => ({ webhook_id: row.webhook_id, oldest_due_at: Number(row.oldest_due_at) }));
}

/**
 * How many deliveries each webhook may take in this claim: its free slots, oldest waiting work
 * first, until the claim's limit is reached. Webhooks at their limit take nothing.
 */
function planShares(webhooks: WebhookWithDueWork[], options: ClaimOptions): { webhookId: string; count: number }[] {
  const shares: { webhookId: string; count: number }[] = [];
  let budget = options.limit;
  for (const { webhook_id: webhookId } of webhooks) {
    if (budget <= 0) break;
    const count = Math.min(options.freeSlotsByWebhook.get(webhookId) ?? options.perWebhookLimit, budget);
    if (count <= 0) continue;
    shares.push({ webhookId, count });
    budget -= count;
  }
  return shares;
}

/** Each webhook's oldest due, unheld deliveries, as many as its share: one index range each. */
async function oldestDueOfEach(db: Executor, shares: { webhookId: string; count: number }[], now: number) {
  const oldestDue = (share: { webhookId: string; count: number }, index: number) =>
    db
      .selectFrom(
        db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('state', '=', 'pending')
          .where('webhook_id', '=', share.webhookId)
          .where('next_attempt_at', '<=', now)
          .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
          .orderBy('next_attempt_at')
          .limit(share.count)
          .as(`share_${index}`),
      )
      .selectAll();
  let query = oldestDue(shares[0]!, 0);
  for (let index = 1; index < shares.length; index++) query = query.unionAll(oldestDue(shares[index]!, index));
  return query.execute();
}

/** Gives claimed deliveries back untouched, for work claimed beyond an endpoint's limit. */
export async function releaseClaims(db: Executor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('webhook_deliveries').set({ claimed_until: null }).where('id', 'in', ids).execute();
}

export interface AttemptOutcome {
  attempt: WebhookAttempt;
  state: DeliveryState;
  nextAttemptAt: Date | null;
  /** The claim's lease: if it has lapsed and been replaced, another attempt owns the state. */
  leaseUntil: number;
}

/**
 * Writes a batch of attempts and the new states of their deliveries. The attempts go in one
 * multi-row insert, and successes, the common case, in one update per status code, so a burst
 * of deliveries costs a handful of statements rather than several per delivery.
 */
export async function recordAttempts(db: Executor, allOutcomes: AttemptOutcome[]): Promise<void> {
  if (allOutcomes.length === 0) return;
  // A webhook deleted while its requests were in flight takes its deliveries with it; their
  // outcomes have nothing left to record, and must not fail the rest of the batch.
  const surviving = new Set(
    (await db.selectFrom('webhook_deliveries').select('id').where('id', 'in', allOutcomes.map((outcome) => outcome.attempt.deliveryId)).execute()).map((row) => row.id),
  );
  const outcomes = allOutcomes.filter((outcome) => surviving.has(outcome.attempt.deliveryId));
  if (outcomes.length === 0) return;
  await db
    .insertInto('webhook_attempts')
    .values(
      outcomes.map(({ attempt }) => ({
        id: attempt.id,
        delivery_id: attempt.deliveryId,
        webhook_id: attempt.webhookId,
        attempted_at: attempt.attemptedAt.getTime(),
        duration_ms: attempt.durationMs,
        status_code: attempt.statusCode,
        response_excerpt: attempt.responseExcerpt,
        error: attempt.error,
      })),
    )
    .execute();
  const now = Date.now();
  const deliveredByStatus = new Map<string, AttemptOutcome[]>();
  for (const outcome of outcomes) {
    if (outcome.state === 'delivered') {
      const key = `${outcome.attempt.statusCode}:${outcome.leaseUntil}`;
      deliveredByStatus.set(key, [...(deliveredByStatus.get(key) ?? []), outcome]);
      continue;
    }
    await db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        state: outcome.state,
        attempt_count: eb('attempt_count', '+', 1),
        next_attempt_at: (outcome.nextAttemptAt ?? outcome.attempt.attemptedAt).getTime(),
        claimed_until: null,
        last_attempt_at: outcome.attempt.attemptedAt.getTime(),
        last_status_code: outcome.attempt.statusCode,
        last_error: outcome.attempt.error,
        updated_at: now,
      }))
      .where('id', '=', outcome.attempt.deliveryId)
      .where('claimed_until', '=', outcome.leaseUntil)
      .execute();
  }
  for (const group of deliveredByStatus.values()) {
    const { statusCode } = group[0]!.attempt;
    await db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        state: 'delivered',
        attempt_count: eb('attempt_count', '+', 1),
        claimed_until: null,
        // The batch's latest attempt time: each attempt row keeps its exact one.
        last_attempt_at: Math.max(...group.map((outcome) => outcome.attempt.attemptedAt.getTime())),
        last_status_code: statusCode,
        last_error: null,
        updated_at: now,
      }))
      .where('id', 'in', group.map((outcome) => outcome.attempt.deliveryId))
      .where('claimed_until', '=', group[0]!.leaseUntil)
      .execute();
  }
}

const deliveryColumns = [
  'webhook_deliveries.id',
  'webhook_deliveries.event_id',
  'webhook_events.event_type',
  'webhook_deliveries.webhook_id',
  'webhook_deliveries.account_id',
  'webhook_deliveries.state',
  'webhook_deliveries.attempt_count',
  'webhook_deliveries.next_attempt_at',
  'webhook_deliveries.last_attempt_at',
  'webhook_deliveries.last_status_code',
  'webhook_deliveries.last_error',
  'webhook_deliveries.created_at',
] as const;

function deliveriesQuery(db: Executor) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select(deliveryColumns);
}

type DeliverySelection = Awaited<ReturnType<ReturnType<typeof deliveriesQuery>['executeTakeFirstOrThrow']>>;

function toDelivery(row: DeliverySelection): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type as DeliveredEventType,
    webhookId: row.webhook_id,
    accountId: row.account_id,
    state: row.state as DeliveryState,
    attemptCount: row.attempt_count,
    nextAttemptAt: new Date(row.next_attempt_at),
    lastAttemptAt: row.last_attempt_at === null ? null : new Date(row.last_attempt_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
  };
}

export async function findDelivery(db: Executor, id: string, accountId?: string): Promise<WebhookDelivery | undefined> {
  let query = deliveriesQuery(db).where('webhook_deliveries.id', '=', id);
  if (accountId !== undefined) query = query.where('webhook_deliveries.account_id', '=', accountId);
  const row = await query.executeTakeFirst();
  return row && toDelivery(row);
}

/** Newest first. */
export async function listDeliveries(db: Executor, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
  const rows = await deliveriesQuery(db)
    .where('webhook_deliveries.webhook_id', '=', webhookId)
    .orderBy('webhook_deliveries.created_at', 'desc')
    .orderBy('webhook_deliveries.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toDelivery);
}

export async function listAttempts(db: Executor, deliveryId: string): Promise<WebhookAttempt[]> {
  const rows = await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempted_at').orderBy('id').execute();
  return rows.map((row) => ({
    id: row.id,
    deliveryId: row.delivery_id,
    webhookId: row.webhook_id,
    attemptedAt: new Date(row.attempted_at),
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    responseExcerpt: row.response_excerpt,
    error: row.error,
  }));
}

/**
 * Puts a delivery back in line for an attempt now, whatever its state. A live lease is kept:
 * a delivery in flight is not sent twice at once, and its current attempt decides its state.
 */
export async function scheduleRedelivery(db: Executor, id: string, at: Date): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      state: 'pending',
      next_attempt_at: at.getTime(),
      claimed_until: sql<number | null>`case when claimed_until > ${at.getTime()} then claimed_until else null end`,
      updated_at: at.getTime(),
    })
    .where('id', '=', id)
    .execute();
}

export async function countPendingDeliveries(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Deletes attempts, finished deliveries and their events older than the cutoff. */
export async function pruneDeliveryHistory(db: Executor, cutoff: Date): Promise<void> {
  const before = cutoff.getTime();
  await db.deleteFrom('webhook_attempts').where('attempted_at', '<', before).execute();
  await db.deleteFrom('webhook_deliveries').where('state', 'in', ['delivered', 'failed']).where('updated_at', '<', before).execute();
  await db
    .deleteFrom('webhook_events')
    .where('created_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('webhook_deliveries').select('webhook_deliveries.id').whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id'))),
    )
    .execute();
}

/**
 * The outbox's depth for the metrics scrape: pending deliveries, and how many of them are due.
 * Both read only the (state, next_attempt_at) index, so a scrape stays cheap with a backlog.
 */
export async function countQueuedDeliveries(db: Executor, now: number): Promise<{ pending: number; due: number }> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('pending'),
      eb.fn.sum<number | string | null>(eb.case().when('next_attempt_at', '<=', now).then(eb.lit(1)).else(eb.lit(0)).end()).as('due'),
    ])
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), due: Number(row.due ?? 0) };
}
