import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { DeliveryDay, MessageDay } from '../../observability/account-activity.ts';
import type { ScopedAccount } from '../context.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'activity'>;

/** The charts' period: the last 30 UTC days, today included. */
export const ACTIVITY_DAYS = 30;

export interface ActivityView {
  messages: MessageDay[];
  deliveries: DeliveryDay[];
  totals: { sent: number; received: number; failed: number; delivered: number; deliveryFailed: number; pending: number };
}

export async function presentActivity(gateway: Services, account: ScopedAccount, now = new Date()): Promise<ActivityView> {
  const [messages, deliveries] = await Promise.all([
    gateway.activity.messages(account.scope, ACTIVITY_DAYS, now),
    gateway.activity.deliveries(account.scope, ACTIVITY_DAYS, now),
  ]);
  const sum = <T>(rows: readonly T[], pick: (row: T) => number) => rows.reduce((total, row) => total + pick(row), 0);
  return {
    messages,
    deliveries,
    totals: {
      sent: sum(messages, (day) => day.sent),
      received: sum(messages, (day) => day.received),
      failed: sum(messages, (day) => day.failed),
      delivered: sum(deliveries, (day) => day.delivered),
      deliveryFailed: sum(deliveries, (day) => day.failed),
      pending: sum(deliveries, (day) => day.pending),
    },
  };
}

/** A day as the axis names it: "11-29" (UTC). */
export function dayLabel(day: Date): string {
  return day.toISOString().slice(5, 10);
}
