import type { AccountScope } from '../domain/tenant-scope.ts';
import type { Store } from '../store/database.ts';
import { attemptLatencyPerDay, deliveryCountsPerDay, messageCountsPerDay } from '../store/repositories/activity.ts';

const DAY_MS = 86_400_000;

/** One UTC day of an account's messages: as GET /messages counts them with since, until, direction and status. */
export interface MessageDay {
  day: Date;
  /** Outbound messages that left the number: now `sent`, `delivered` or `read`. */
  sent: number;
  /** Inbound messages. */
  received: number;
  /** Outbound messages now `failed`. */
  failed: number;
}

/** One UTC day of an account's webhook deliveries, by where each stands, and its attempts' times. */
export interface DeliveryDay {
  day: Date;
  delivered: number;
  failed: number;
  pending: number;
  attempts: number;
  meanMs: number | null;
  maxMs: number | null;
}

const LEFT = new Set(['sent', 'delivered', 'read']);

/** The account's last days as the dashboard's Activity charts show them (ADR 0073), UTC days, oldest first. */
export class AccountActivityService {
  constructor(private readonly store: Store) {}

  async messages(scope: AccountScope, days: number, now: Date): Promise<MessageDay[]> {
    const { since, until, all } = period(days, now);
    const rows = await messageCountsPerDay(this.store.db, scope.accountId, since, until);
    return all.map((day) => {
      const of = rows.filter((row) => row.day === day.getTime());
      const sum = (match: (row: (typeof rows)[number]) => boolean) => of.filter(match).reduce((total, row) => total + row.count, 0);
      return {
        day,
        sent: sum((row) => row.direction === 'outbound' && LEFT.has(row.status)),
        received: sum((row) => row.direction === 'inbound'),
        failed: sum((row) => row.direction === 'outbound' && row.status === 'failed'),
      };
    });
  }

  async deliveries(scope: AccountScope, days: number, now: Date): Promise<DeliveryDay[]> {
    const { since, until, all } = period(days, now);
    const [counts, latency] = await Promise.all([
      deliveryCountsPerDay(this.store.db, scope.accountId, since, until),
      attemptLatencyPerDay(this.store.db, scope.accountId, since, until),
    ]);
    return all.map((day) => {
      const count = (state: string) => counts.find((row) => row.day === day.getTime() && row.state === state)?.count ?? 0;
      const times = latency.find((row) => row.day === day.getTime());
      return {
        day,
        delivered: count('delivered'),
        failed: count('failed'),
        pending: count('pending'),
        attempts: times?.attempts ?? 0,
        meanMs: times?.meanMs ?? null,
        maxMs: times?.maxMs ?? null,
      };
    });
  }
}

/** The last `days` UTC days, today included: their starts, and the period they make. */
function period(days: number, now: Date): { since: Date; until: Date; all: Date[] } {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const all = Array.from({ length: days }, (_unused, index) => new Date(today - (days - 1 - index) * DAY_MS));
  return { since: all[0]!, until: new Date(today + DAY_MS), all };
}
