import { sql } from 'kysely';
import type { Executor } from '../database.ts';

// The dashboard's Activity charts (ADR 0073): counts per UTC day of an account's messages and
// webhook deliveries, and its webhook attempts' latency, each one grouped query through an index
// that starts with the account (or its webhooks) and the time.

const DAY_MS = 86_400_000;

/** How many of an account's messages were created on each UTC day, by direction and latest status. */
export interface MessageDayCount {
  /** The day's start, in ms since the epoch. */
  day: number;
  direction: string;
  status: string;
  count: number;
}

export async function messageCountsPerDay(db: Executor, accountId: string, since: Date, until: Date): Promise<MessageDayCount[]> {
  const day = sql<number | string>`(created_at / ${sql.lit(DAY_MS)})`;
  const rows = await db
    .selectFrom('messages')
    .select((eb) => [day.as('day'), 'direction', 'status', eb.fn.countAll<number | string>().as('count')])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', since.getTime())
    .where('created_at', '<', until.getTime())
    .groupBy([day, 'direction', 'status'])
    .execute();
  return rows.map((row) => ({ day: Number(row.day) * DAY_MS, direction: row.direction, status: row.status, count: Number(row.count) }));
}

/** How many of an account's webhook deliveries were made on each UTC day, by where each stands. */
export interface DeliveryDayCount {
  day: number;
  state: string;
  count: number;
}

export async function deliveryCountsPerDay(db: Executor, accountId: string, since: Date, until: Date): Promise<DeliveryDayCount[]> {
  const day = sql<number | string>`(webhook_deliveries.created_at / ${sql.lit(DAY_MS)})`;
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [day.as('day'), 'state', eb.fn.countAll<number | string>().as('count')])
    // By the account's webhooks, through the index on (webhook_id, created_at).
    .where('webhook_id', 'in', db.selectFrom('webhooks').select('id').where('account_id', '=', accountId))
    .where('created_at', '>=', since.getTime())
    .where('created_at', '<', until.getTime())
    .groupBy([day, 'state'])
    .execute();
  return rows.map((row) => ({ day: Number(row.day) * DAY_MS, state: row.state, count: Number(row.count) }));
}

/** The account's webhook attempts of each UTC day: how many, and their mean and longest time. */
export interface AttemptDayLatency {
  day: number;
  attempts: number;
  meanMs: number;
  maxMs: number;
}

export async function attemptLatencyPerDay(db: Executor, accountId: string, since: Date, until: Date): Promise<AttemptDayLatency[]> {
  const day = sql<number | string>`(webhook_attempts.attempted_at / ${sql.lit(DAY_MS)})`;
  const rows = await db
    .selectFrom('webhook_attempts')
    .select((eb) => [
      day.as('day'),
      eb.fn.countAll<number | string>().as('attempts'),
      eb.fn.avg<number | string>('duration_ms').as('mean_ms'),
      eb.fn.max<number | string>('duration_ms').as('max_ms'),
    ])
    // The attempts of the account's deliveries made in the period (an attempt comes after its
    // delivery), found through the deliveries' indexes rather than all accounts' attempts by time.
    .where(
      'delivery_id',
      'in',
      db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('webhook_id', 'in', db.selectFrom('webhooks').select('id').where('account_id', '=', accountId))
        .where('created_at', '>=', since.getTime())
        .where('created_at', '<', until.getTime()),
    )
    .where('attempted_at', '>=', since.getTime())
    .where('attempted_at', '<', until.getTime())
    .groupBy(day)
    .execute();
  return rows.map((row) => ({
    day: Number(row.day) * DAY_MS,
    attempts: Number(row.attempts),
    meanMs: Math.round(Number(row.mean_ms)),
    maxMs: Number(row.max_ms),
  }));
}
