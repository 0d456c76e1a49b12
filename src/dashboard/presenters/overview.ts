import type { GatewayServices } from '../../ports/gateway-services.ts';
import { planLabel, toMessageRow, toNumberRow, usersById, type MessageRowView, type NumberRowView } from './shared.ts';
import type { ScopedAccount } from '../context.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'history' | 'numbers'>;

export interface UsageView {
  plan: string;
  used: number;
  /** Null when the plan is unlimited. */
  limit: number | null;
  /** 0–100, for the bar; null when unlimited. */
  percent: number | null;
  resetsAt: Date;
  isCustomLimit: boolean;
}

export interface OverviewView {
  accountName: string;
  usage: UsageView;
  numbers: NumberRowView[];
  latestMessages: MessageRowView[];
}

const LATEST_MESSAGES = 10;

export async function presentOverview(gateway: Services, account: ScopedAccount): Promise<OverviewView> {
  const [usage, numbers, users, history] = await Promise.all([
    gateway.accounts.usage(account.id),
    gateway.numbers.listNumbers(account.scope),
    gateway.accounts.listUsers(account.scope),
    gateway.history.page(account.scope, { limit: LATEST_MESSAGES }),
  ]);
  const holders = usersById(users);
  return {
    accountName: account.name,
    usage: {
      plan: planLabel(usage.plan),
      used: usage.used,
      limit: usage.limit,
      percent: usage.limit === null ? null : usage.limit === 0 ? 100 : Math.min(100, Math.round((usage.used / usage.limit) * 100)),
      resetsAt: usage.resetsAt,
      isCustomLimit: account.customMonthlyLimit !== null,
    },
    numbers: numbers.map((number) => toNumberRow(number, holders)),
    latestMessages: history.messages.map(toMessageRow),
  };
}
