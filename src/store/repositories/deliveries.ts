import type { DeliveredEventType, DeliveryState, WebhookAttempt, WebhookDelivery } from '../../domain/webhooks.ts';
import { sql, type QueryCreator } from 'kysely';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { Database } from '../schema.ts';
import { scopedAccountId, type TenantScope } from '../../domain/tenant-scope.ts';

export interface NewEvent {
  id: string;
  accountId: string;
  eventType: DeliveredEventType;
  payload: string;
  createdAt: Date;
}

// An event and its delivery are written for every message and status change an account's
// webhook hears of; these fixed shapes are compiled once.
const insertEventRow = compiledStatement((db, v: EventValues) => eventInsert(db, v));

const insertOneDelivery = compiledStatement((db, v: DeliveryValues) => db.insertInto('webhook_deliveries').values(pendingDelivery(v)));

async function insertEvent(db: Executor, event: NewEvent): Promise<void> {
  await insertEventRow(db, eventValues(event));
}

function eventValues(event: NewEvent) {
  return { id: event.id, accountId: event.accountId, eventType: event.eventType, payload: event.payload, at: event.createdAt.getTime() };
}

/**
 * A delivery of an event to one webhook; it belongs to the event's account and is due when the
 * event happened. `claimedUntil` is the claim of the node that will send it from memory once the
 * write commits (null: it waits for a claim).
 */
export interface EventDelivery {
  id: string;
  webhookId: string;
  claimedUntil: number | null;
}

/**
 * Writes an event and its deliveries. On PostgreSQL an event with one delivery, the usual case,
 * is one statement (the event inserted in a CTE), a round trip less for every message and
 * status change a webhook hears of.
 */
export async function insertEventWithDeliveries(db: Executor, event: NewEvent, deliveries: EventDelivery[]): Promise<void> {
  if (deliveries.length === 1 && runsOnPostgres(db)) {
    const [delivery] = deliveries as [EventDelivery];
    await insertEventAndDelivery(db, {
      ...eventValues(event),
      deliveryId: delivery.id,
      webhookId: delivery.webhookId,
      claimedUntil: delivery.claimedUntil,
    });
    return;
  }
  await insertEvent(db, event);
  await insertDeliveries(db, event, deliveries);
}

type EventValues = ReturnType<typeof eventValues>;
type DeliveryValues = { id: string; eventId: string; webhookId: string; accountId: string; at: number; claimedUntil: number | null };

// The event's values, and of its delivery the id and the webhook: the rest they share.
const insertEventAndDelivery = compiledStatement(
  (db, v: EventValues & { deliveryId: string; webhookId: string; claimedUntil: number | null }) =>
    db
      .with('event', (cte) => eventInsert(cte, v))
      .insertInto('webhook_deliveries')
      .values(
        pendingDelivery({
          id: v.deliveryId,
          eventId: v.id,
          webhookId: v.webhookId,
          accountId: v.accountId,
          at: v.at,
          claimedUntil: v.claimedUntil,
        }),
      ),
);

/** The event's insert, for the statements that write one; a CTE too, hence the QueryCreator. */
export function eventInsert(db: QueryCreator<Database>, v: EventValues) {
  return db
    .insertInto('webhook_events')
    .values({ id: v.id, account_id: v.accountId, event_type: v.eventType, payload: v.payload, created_at: v.at });
}

async function insertDeliveries(db: Executor, event: NewEvent, deliveries: EventDelivery[]): Promise<void> {
  const rows = deliveries.map((delivery) => ({
    id: delivery.id,
    eventId: event.id,
    webhookId: delivery.webhookId,
    accountId: event.accountId,
    at: event.createdAt.getTime(),
    claimedUntil: delivery.claimedUntil,
  }));
  if (rows.length === 0) return;
  // The common case, an account with one webhook, takes the compiled statement.
  if (rows.length === 1) await insertOneDelivery(db, rows[0]!);
  else await db.insertInto('webhook_deliveries').values(rows.map(pendingDelivery)).execute();
}

export function pendingDelivery(delivery: DeliveryValues) {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    webhook_id: delivery.webhookId,
    account_id: delivery.accountId,
    state: 'pending',
    attempt_count: 0,
    next_attempt_at: delivery.at,
    claimed_until: delivery.claimedUntil,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    created_at: delivery.at,
    updated_at: delivery.at,
  };
}

export interface AttemptOutcome {
  attempt: WebhookAttempt;
  state: DeliveryState;
  nextAttemptAt: Date | null;
  /** The claim's expiry: if it has lapsed and been replaced, another attempt owns the state. */
  claimedUntil: number;
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
    (
      await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where(
          'id',
          'in',
          allOutcomes.map((outcome) => outcome.attempt.deliveryId),
        )
        .execute()
    ).map((row) => row.id),
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
      const key = `${outcome.attempt.statusCode}:${outcome.claimedUntil}`;
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
      .where('claimed_until', '=', outcome.claimedUntil)
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
      .where(
        'id',
        'in',
        group.map((outcome) => outcome.attempt.deliveryId),
      )
      .where('claimed_until', '=', group[0]!.claimedUntil)
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

/** A delivery the scope may see; another account's is not found. */
export async function findDelivery(db: Executor, scope: TenantScope, id: string): Promise<WebhookDelivery | undefined> {
  let query = deliveriesQuery(db).where('webhook_deliveries.id', '=', id);
  const accountId = scopedAccountId(scope);
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
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempted_at')
    .orderBy('id')
    .execute();
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
 * Puts a delivery back in line for an attempt now, whatever its state. A live claim is kept:
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
      not(
        exists(
          selectFrom('webhook_deliveries')
            .select('webhook_deliveries.id')
            .whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id'),
        ),
      ),
    )
    .execute();
}

/**
 * The outbox's depth for the metrics scrape: pending deliveries, and how many of them are due.
 * Both read only the (state, webhook_id, next_attempt_at) index, so a scrape stays cheap with a backlog.
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
