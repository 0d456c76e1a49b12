import { sql, type Transaction } from 'kysely';
import type { BatchStep, BatchStepKind, EndOfBatch } from '../group-commit.ts';
import type { Database } from '../schema.ts';
import { compiledStatement, runsOnPostgres } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import { insertEventWithDeliveries, type EventDelivery, type NewEvent } from './deliveries.ts';

interface EventWithDeliveries {
  event: NewEvent;
  deliveries: EventDelivery[];
}

/**
 * Writes several events with their deliveries. On PostgreSQL they go in one statement whatever
 * their number (the events inserted in a CTE, each column one array parameter); on SQLite in two,
 * the rows as one JSON parameter each. A single event takes the one-event statements.
 */
async function insertEventsWithDeliveries(db: Executor, written: readonly EventWithDeliveries[]): Promise<void> {
  const events = written.filter((entry) => entry.deliveries.length > 0);
  if (events.length === 0) return;
  if (events.length === 1) {
    await insertEventWithDeliveries(db, events[0]!.event, events[0]!.deliveries);
    return;
  }
  const deliveries = events.flatMap(({ event, deliveries: ofEvent }) =>
    ofEvent.map((delivery) => ({ ...delivery, eventId: event.id, accountId: event.accountId, at: event.createdAt.getTime() })),
  );
  if (runsOnPostgres(db)) {
    await insertEventsPostgres(db, {
      eventIds: events.map(({ event }) => event.id),
      eventAccountIds: events.map(({ event }) => event.accountId),
      eventTypes: events.map(({ event }) => event.eventType),
      payloads: events.map(({ event }) => event.payload),
      eventAts: events.map(({ event }) => event.createdAt.getTime()),
      deliveryIds: deliveries.map((delivery) => delivery.id),
      deliveryEventIds: deliveries.map((delivery) => delivery.eventId),
      webhookIds: deliveries.map((delivery) => delivery.webhookId),
      deliveryAccountIds: deliveries.map((delivery) => delivery.accountId),
      deliveryAts: deliveries.map((delivery) => delivery.at),
      claimedUntils: deliveries.map((delivery) => delivery.claimedUntil),
    });
    return;
  }
  await insertEventsSqlite(db, {
    rows: JSON.stringify(
      events.map(({ event }) => ({ i: event.id, a: event.accountId, e: event.eventType, p: event.payload, t: event.createdAt.getTime() })),
    ),
  });
  await insertDeliveriesSqlite(db, {
    rows: JSON.stringify(
      deliveries.map((delivery) => ({
        i: delivery.id,
        e: delivery.eventId,
        w: delivery.webhookId,
        a: delivery.accountId,
        t: delivery.at,
        c: delivery.claimedUntil,
      })),
    ),
  });
}

type EventColumns = {
  eventIds: string[];
  eventAccountIds: string[];
  eventTypes: string[];
  payloads: string[];
  eventAts: number[];
  deliveryIds: string[];
  deliveryEventIds: string[];
  webhookIds: string[];
  deliveryAccountIds: string[];
  deliveryAts: number[];
  claimedUntils: (number | null)[];
};

const DELIVERY_COLUMNS = [
  'id',
  'event_id',
  'webhook_id',
  'account_id',
  'state',
  'attempt_count',
  'next_attempt_at',
  'claimed_until',
  'last_attempt_at',
  'last_status_code',
  'last_error',
  'created_at',
  'updated_at',
] as const;

// unnest() side by side in a select list walks the arrays in step, one row per index.
const insertEventsPostgres = compiledStatement((db, v: EventColumns) =>
  db
    .with('event', (cte) =>
      cte
        .insertInto('webhook_events')
        .columns(['id', 'account_id', 'event_type', 'payload', 'created_at'])
        .expression(
          db.selectNoFrom([
            sql<string>`unnest(cast(${v.eventIds} as text[]))`.as('id'),
            sql<string>`unnest(cast(${v.eventAccountIds} as text[]))`.as('account_id'),
            sql<string>`unnest(cast(${v.eventTypes} as text[]))`.as('event_type'),
            sql<string>`unnest(cast(${v.payloads} as text[]))`.as('payload'),
            sql<number>`unnest(cast(${v.eventAts} as bigint[]))`.as('created_at'),
          ]),
        ),
    )
    .insertInto('webhook_deliveries')
    .columns(DELIVERY_COLUMNS)
    .expression(
      db.selectNoFrom([
        sql<string>`unnest(cast(${v.deliveryIds} as text[]))`.as('id'),
        sql<string>`unnest(cast(${v.deliveryEventIds} as text[]))`.as('event_id'),
        sql<string>`unnest(cast(${v.webhookIds} as text[]))`.as('webhook_id'),
        sql<string>`unnest(cast(${v.deliveryAccountIds} as text[]))`.as('account_id'),
        sql<string>`'pending'`.as('state'),
        sql<number>`0`.as('attempt_count'),
        sql<number>`unnest(cast(${v.deliveryAts} as bigint[]))`.as('next_attempt_at'),
        sql<number | null>`unnest(cast(${v.claimedUntils} as bigint[]))`.as('claimed_until'),
        sql<null>`null`.as('last_attempt_at'),
        sql<null>`null`.as('last_status_code'),
        sql<null>`null`.as('last_error'),
        sql<number>`unnest(cast(${v.deliveryAts} as bigint[]))`.as('created_at'),
        sql<number>`unnest(cast(${v.deliveryAts} as bigint[]))`.as('updated_at'),
      ]),
    ),
);

const insertEventsSqlite = compiledStatement((db, v: { rows: string }) =>
  db
    .insertInto('webhook_events')
    .columns(['id', 'account_id', 'event_type', 'payload', 'created_at'])
    .expression(
      db
        .selectFrom(sql`json_each(${v.rows})`.as('r'))
        .select([
          sql<string>`r.value ->> 'i'`.as('id'),
          sql<string>`r.value ->> 'a'`.as('account_id'),
          sql<string>`r.value ->> 'e'`.as('event_type'),
          sql<string>`r.value ->> 'p'`.as('payload'),
          sql<number>`r.value ->> 't'`.as('created_at'),
        ]),
    ),
);

const insertDeliveriesSqlite = compiledStatement((db, v: { rows: string }) =>
  db
    .insertInto('webhook_deliveries')
    .columns(DELIVERY_COLUMNS)
    .expression(
      db
        .selectFrom(sql`json_each(${v.rows})`.as('r'))
        .select([
          sql<string>`r.value ->> 'i'`.as('id'),
          sql<string>`r.value ->> 'e'`.as('event_id'),
          sql<string>`r.value ->> 'w'`.as('webhook_id'),
          sql<string>`r.value ->> 'a'`.as('account_id'),
          sql<string>`'pending'`.as('state'),
          sql<number>`0`.as('attempt_count'),
          sql<number>`r.value ->> 't'`.as('next_attempt_at'),
          sql<number | null>`r.value ->> 'c'`.as('claimed_until'),
          sql<null>`null`.as('last_attempt_at'),
          sql<null>`null`.as('last_status_code'),
          sql<null>`null`.as('last_error'),
          sql<number>`r.value ->> 't'`.as('created_at'),
          sql<number>`r.value ->> 't'`.as('updated_at'),
        ]),
    ),
);

/**
 * The batch's events and deliveries, written together at its end, after the status changes
 * they report (status-writes.ts): one statement on PostgreSQL, two on SQLite, however many.
 */
class EventInserts implements BatchStep {
  private readonly written: EventWithDeliveries[] = [];

  add(entry: EventWithDeliveries): void {
    this.written.push(entry);
  }

  async finish(trx: Transaction<Database>): Promise<void> {
    await insertEventsWithDeliveries(trx, this.written);
  }
}

const EVENT_INSERTS: BatchStepKind<EventInserts> = { rank: 4, create: () => new EventInserts() };

/** Queues an event with its deliveries to be written at the end of the caller's batch, in its commit. */
export function queueEventInsert(batch: EndOfBatch, event: NewEvent, deliveries: EventDelivery[]): void {
  if (deliveries.length > 0) batch.step(EVENT_INSERTS).add({ event, deliveries });
}
