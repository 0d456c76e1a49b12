import type { ChatwootInbox, DeliveredEventType, RabbitmqTarget } from '../../domain/webhooks.ts';
import { sql } from 'kysely';
import type { Executor } from '../database.ts';

/** Everything the worker needs to make one attempt, sealed secrets included. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  url: string;
  eventType: DeliveredEventType;
  payload: string;
  attemptCount: number;
  createdAt: number;
  /** The outbox event's id: a RabbitMQ message's message_id, the same for every sink and retry. */
  eventId: string;
  sealedSecret: string;
  sealedPreviousSecret: string | null;
  /** A RabbitMQ sink's full URL, sealed, with where it publishes; null for an HTTP webhook. */
  sealedTarget: string | null;
  rabbitmq: RabbitmqTarget | null;
  /** A Chatwoot inbox's ids (its sealed target is the API access token); null for any other destination. */
  chatwoot: ChatwootInbox | null;
  previousSecretExpiresAt: number | null;
  /** The expiry this claim set; an outcome is written only while the claim is still this one. */
  claimedUntil: number;
}

/**
 * Per-webhook selects joined into one statement, well under SQLite's limit on compound selects.
 * A claim reads further groups only while it still has room.
 */
const WEBHOOKS_PER_STATEMENT = 50;
/**
 * How far past its share a claim reads a webhook's due deliveries, in multiples of the share (and
 * never fewer than the minimum), to send the oldest of them first: a retry's due time carries
 * jitter, so once a backlog is due its due times no longer follow the events' order.
 */
const DUE_WINDOW_PER_SHARE = 2;
const MIN_DUE_WINDOW = 64;

export interface ClaimOptions {
  now: number;
  claimedUntil: number;
  limit: number;
  /** At most this many per webhook in one claim: one endpoint's backlog cannot fill a batch. */
  perWebhookLimit: number;
  /** Webhooks whose share is not `perWebhookLimit` now, and how many more each may take (0: none). */
  freeSlotsByWebhook: Map<string, number>;
}

/**
 * Claims due deliveries of enabled webhooks by setting their claim expiry. The conditional update is the
 * claim itself: of two workers racing for a row, the second finds the row already claimed and
 * skips it. A worker that dies mid-attempt lets its claim lapse, and the delivery is claimed
 * again: at least once, never lost.
 *
 * Work is chosen per webhook, never by walking the queue: each webhook with due work is found
 * and read through the (state, webhook_id, next_attempt_at) index. A claim therefore costs the
 * same however large any one endpoint's backlog is, and a hanging endpoint's queue, however
 * deep, is never read while its slots are full. Of a webhook's earliest-due deliveries (a window
 * a few times its share), the oldest events go first, by creation and then id.
 */
export interface Claim {
  deliveries: ClaimedDelivery[];
  /**
   * Webhooks that may have due work this claim left behind: no free slot, no room left in the
   * claim, or as many found as they could take. New work for them joins the queue behind it.
   */
  webhooksWithMore: string[];
}

export async function claimDueDeliveries(db: Executor, options: ClaimOptions): Promise<Claim> {
  const dueWebhooks = await webhooksWithDueWork(db, options.now);
  const shares = sharesOf(dueWebhooks, options);
  const found: DueDelivery[] = [];
  for (let offset = 0; offset < shares.length && found.length < options.limit; offset += WEBHOOKS_PER_STATEMENT) {
    found.push(...(await oldestDueOfEach(db, shares.slice(offset, offset + WEBHOOKS_PER_STATEMENT), options.now)));
  }
  // The last group read may overshoot the limit; the oldest work goes first.
  const candidates = found.sort(oldestFirst).slice(0, options.limit);
  const webhooksWithMore = leftBehind(dueWebhooks, shares, found, candidates);
  if (candidates.length === 0) return { deliveries: [], webhooksWithMore };

  const claimed = await db
    .updateTable('webhook_deliveries')
    .set({ claimed_until: options.claimedUntil })
    .where(
      'id',
      'in',
      candidates.map((row) => row.id),
    )
    // Everything the candidates were chosen by is checked again here, where it counts: a row
    // another worker claimed or finished since the select is left alone. The checks form one
    // expression so that SQLite finds the rows by id: given them as separate terms, its planner
    // ranges over the due index instead, a cost that grows with every delivery queued.
    .where(
      sql<boolean>`(case when state = 'pending' and next_attempt_at <= ${options.now} and (claimed_until is null or claimed_until < ${options.now}) then 1 else 0 end) = 1`,
    )
    .returning('id')
    .execute();
  if (claimed.length === 0) return { deliveries: [], webhooksWithMore };
  const rows = await db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select([
      'webhook_deliveries.id',
      'webhook_deliveries.webhook_id',
      'webhook_deliveries.attempt_count',
      'webhook_deliveries.created_at',
      'webhook_deliveries.event_id',
      'webhooks.url',
      'webhooks.target_ciphertext',
      'webhooks.amqp_exchange',
      'webhooks.amqp_routing_key',
      'webhooks.chatwoot_account_id',
      'webhooks.chatwoot_inbox_id',
      'webhooks.chatwoot_number',
      'webhooks.secret_ciphertext',
      'webhooks.previous_secret_ciphertext',
      'webhooks.previous_secret_expires_at',
      'webhook_events.event_type',
      'webhook_events.payload',
    ])
    .where(
      'webhook_deliveries.id',
      'in',
      claimed.map((row) => row.id),
    )
    .orderBy('webhook_deliveries.created_at')
    .orderBy('webhook_deliveries.id')
    .execute();
  const deliveries = rows.map((row) => ({
    id: row.id,
    webhookId: row.webhook_id,
    url: row.url,
    eventType: row.event_type as DeliveredEventType,
    payload: row.payload,
    attemptCount: row.attempt_count,
    createdAt: row.created_at,
    eventId: row.event_id,
    sealedSecret: row.secret_ciphertext,
    sealedPreviousSecret: row.previous_secret_ciphertext,
    sealedTarget: row.target_ciphertext,
    rabbitmq:
      row.amqp_exchange === null || row.amqp_routing_key === null
        ? null
        : { exchange: row.amqp_exchange, routingKey: row.amqp_routing_key },
    chatwoot:
      row.chatwoot_account_id === null || row.chatwoot_inbox_id === null
        ? null
        : { accountId: Number(row.chatwoot_account_id), inboxId: Number(row.chatwoot_inbox_id), number: row.chatwoot_number },
    previousSecretExpiresAt: row.previous_secret_expires_at,
    claimedUntil: options.claimedUntil,
  }));
  return { deliveries, webhooksWithMore };
}

/**
 * Every webhook listed with due work counts as left behind unless the claim read its due
 * deliveries to the end (found fewer than its share) and took all it found. A webhook never
 * read, because the claim filled up first, found none and so counts.
 */
function leftBehind(
  dueWebhooks: string[],
  shares: { webhookId: string; count: number }[],
  found: { webhook_id: string }[],
  taken: { webhook_id: string }[],
): string[] {
  const countOf = (rows: { webhook_id: string }[]) => {
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.webhook_id, (counts.get(row.webhook_id) ?? 0) + 1);
    return counts;
  };
  const foundCount = countOf(found);
  const takenCount = countOf(taken);
  const shareOf = new Map(shares.map((share) => [share.webhookId, share.count]));
  return dueWebhooks.filter((webhookId) => {
    const share = shareOf.get(webhookId);
    const foundHere = foundCount.get(webhookId) ?? 0;
    return share === undefined || foundHere === 0 || foundHere >= share || (takenCount.get(webhookId) ?? 0) < foundHere;
  });
}

/**
 * Every enabled webhook with a due delivery that no one holds, the one with the oldest such
 * delivery first. The webhooks with pending deliveries are listed by skipping through the index from one
 * webhook id to the next (one seek each, as PostgreSQL has no skip scan of its own), so the
 * cost follows the number of webhooks with work, not the number of deliveries queued. Ordering
 * by next_attempt_at as well changes no answer, but only the claim index yields that order, and
 * PostgreSQL otherwise may walk the (webhook_id, created_at) index past every delivered row.
 * An event stream (its URL a path) is left out before its deliveries are read: they are its
 * connection's to send, held by a claim that never lapses, and a stream away from its client
 * may hold many.
 */
async function webhooksWithDueWork(db: Executor, now: number): Promise<string[]> {
  return (await oldestDueOfEachWebhook(db, now)).map((row) => row.webhook_id);
}

/**
 * When the longest-waiting due delivery that no node holds became due, or null when none waits:
 * how far the worker is behind (the metrics' wagw_webhook_oldest_due_age_seconds). It reads what
 * a claim reads to choose its webhooks, so it costs a seek per webhook with pending work,
 * whatever the backlog. Work a node holds (claimed, in flight or waiting in its memory for an
 * endpoint's slot) is left out: it is being sent, and a claim that runs down puts it back here.
 */
export async function oldestUnheldDueAt(db: Executor, now: number): Promise<number | null> {
  const [oldest] = await oldestDueOfEachWebhook(db, now);
  return oldest === undefined ? null : Number(oldest.oldest_due_at);
}

/** webhooksWithDueWork's rows, with each webhook's oldest due time (a bigint, so text on PostgreSQL). */
async function oldestDueOfEachWebhook(db: Executor, now: number): Promise<{ webhook_id: string; oldest_due_at: number | string }[]> {
  const result = await sql<{ webhook_id: string; oldest_due_at: number | string }>`
    with recursive pending_webhooks(webhook_id) as (
      select (select webhook_id from webhook_deliveries where state = 'pending' order by webhook_id, next_attempt_at limit 1)
      union all
      select (
        select next_webhook.webhook_id from webhook_deliveries next_webhook
        where next_webhook.state = 'pending' and next_webhook.webhook_id > pending_webhooks.webhook_id
        order by next_webhook.webhook_id, next_webhook.next_attempt_at limit 1
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
      where webhooks.enabled = 1 and webhooks.url not like '/%'
    ) as due
    where due.oldest_due_at is not null
    order by due.oldest_due_at`.execute(db);
  return result.rows;
}

/**
 * How many deliveries each webhook may take in this claim: its free slots, and never more than
 * the claim's limit. Webhooks at their limit take nothing; the oldest waiting work stays first.
 */
function sharesOf(webhookIds: string[], options: ClaimOptions): { webhookId: string; count: number }[] {
  return webhookIds
    .map((webhookId) => ({
      webhookId,
      count: Math.min(options.freeSlotsByWebhook.get(webhookId) ?? options.perWebhookLimit, options.limit),
    }))
    .filter((share) => share.count > 0);
}

interface DueDelivery {
  id: string;
  webhook_id: string;
  created_at: number;
}

/** By when the event was made, then by id: ids made in one millisecond sort in creation order. */
function oldestFirst(a: DueDelivery, b: DueDelivery): number {
  return Number(a.created_at) - Number(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Each webhook's oldest due, unheld deliveries, as many as its share: one index range each, its
 * earliest-due window, of which the oldest events are taken. Reading by due time keeps the cost
 * of a claim independent of how many retries wait further down the schedule.
 */
async function oldestDueOfEach(db: Executor, shares: { webhookId: string; count: number }[], now: number): Promise<DueDelivery[]> {
  const oldestDue = (share: { webhookId: string; count: number }, index: number) =>
    db
      .selectFrom(
        db
          .selectFrom(
            db
              .selectFrom('webhook_deliveries')
              .select(['id', 'webhook_id', 'created_at'])
              .where('state', '=', 'pending')
              .where('webhook_id', '=', share.webhookId)
              .where('next_attempt_at', '<=', now)
              .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
              .orderBy('next_attempt_at')
              .limit(Math.max(share.count * DUE_WINDOW_PER_SHARE, MIN_DUE_WINDOW))
              .as(`due_${index}`),
          )
          .selectAll()
          .orderBy('created_at')
          .orderBy('id')
          .limit(share.count)
          .as(`share_${index}`),
      )
      .selectAll();
  let query = oldestDue(shares[0]!, 0);
  for (let index = 1; index < shares.length; index++) query = query.unionAll(oldestDue(shares[index]!, index));
  return query.execute();
}

/**
 * Gives claimed deliveries back untouched: work claimed beyond an endpoint's limit, or claimed
 * for sending from memory and not started. Only a claim that is still the one given is
 * released: one that lapsed and was claimed again belongs to that claim now.
 */
export async function releaseClaims(db: Executor, claims: { id: string; claimedUntil: number }[]): Promise<void> {
  const idsByClaim = new Map<number, string[]>();
  for (const claim of claims) {
    const ids = idsByClaim.get(claim.claimedUntil);
    if (ids === undefined) idsByClaim.set(claim.claimedUntil, [claim.id]);
    else ids.push(claim.id);
  }
  for (const [claimedUntil, ids] of idsByClaim) {
    await db
      .updateTable('webhook_deliveries')
      .set({ claimed_until: null })
      .where('id', 'in', ids)
      .where('claimed_until', '=', claimedUntil)
      .execute();
  }
}
