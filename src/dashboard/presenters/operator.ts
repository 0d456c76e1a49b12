import type { AccountUsage } from '../../accounts/accounts-service.ts';
import { sessionStatuses, type Account, type UserRole, type WhatsAppNumber } from '../../domain/model.ts';
import { effectiveMonthlyLimit, planNames } from '../../domain/plans.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { SystemStatus } from '../../observability/system-status.ts';
import { formatCount, planLabel, type Choice } from './shared.ts';
import { presentLinkPanel, type LinkPanelView } from './number-linking.ts';
import { presentCloudPanel, type CloudPanelView } from './number-cloud.ts';
import { presentNumberHealth, type NumberHealthView } from './number-health.ts';
import { withinAccount, type OperatorScope } from '../../domain/tenant-scope.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'numbers' | 'numberControl' | 'supervisor' | 'system'>;
/** What the console's numbers page uses besides: its health cards (number-health.ts). */
type NumbersPageServices = Services & Pick<GatewayServices, 'history' | 'pauses' | 'sendQueues'>;

/** A value and the words a select shows for it. */

export interface AccountRef {
  id: string;
  name: string;
}

export interface AccountSummaryView extends AccountRef {
  plan: string;
  /** Null when unlimited. */
  limit: number | null;
  isCustomLimit: boolean;
  used: number;
  createdAt: Date;
}

export type { Choice };

export function planChoices(): Choice[] {
  return planNames.map((plan) => {
    const volume = effectiveMonthlyLimit(plan, null);
    return {
      value: plan,
      label: `${planLabel(plan)} — ${volume === null ? 'unlimited messages' : `${formatCount(volume)} messages a month`}`,
    };
  });
}

export async function presentAccountList(gateway: Services): Promise<AccountSummaryView[]> {
  const accounts = await gateway.accounts.listAccounts();
  return Promise.all(accounts.map(async (account) => summarizeAccount(account, await gateway.accounts.usage(account.id))));
}

function summarizeAccount(account: Account, usage: AccountUsage): AccountSummaryView {
  return {
    id: account.id,
    name: account.name,
    plan: planLabel(account.plan),
    limit: usage.limit,
    isCustomLimit: account.customMonthlyLimit !== null,
    used: usage.used,
    createdAt: account.createdAt,
  };
}

export interface AccountUserView {
  id: string;
  email: string;
  role: UserRole;
  isOperator: boolean;
  createdAt: Date;
}

export interface AccountNumberView {
  id: string;
  phone: string;
  engine: string;
  status: string;
  statusReason: string | null;
}

export interface AccountKeyView {
  name: string;
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface OperatorAccountView {
  summary: AccountSummaryView;
  planValue: string;
  customMonthlyLimit: number | null;
  resetsAt: Date;
  users: AccountUserView[];
  /** The role the Add user form suggests: the first user of an account is its owner. */
  suggestedRole: UserRole;
  numbers: AccountNumberView[];
  apiKeys: AccountKeyView[];
}

export async function presentOperatorAccount(gateway: Services, operator: OperatorScope, accountId: string): Promise<OperatorAccountView> {
  const account = await gateway.accounts.getAccount(accountId);
  const inAccount = withinAccount(operator, account.id);
  const [usage, users, numbers, keys] = await Promise.all([
    gateway.accounts.usage(account.id),
    gateway.accounts.listUsers(inAccount),
    gateway.numbers.listNumbers(inAccount),
    gateway.apiKeys.listKeys(account.id),
  ]);
  return {
    summary: summarizeAccount(account, usage),
    planValue: account.plan,
    customMonthlyLimit: account.customMonthlyLimit,
    resetsAt: usage.resetsAt,
    users: users.map((user) => ({
      id: user.id,
      email: user.email,
      role: user.role,
      isOperator: user.isOperator,
      createdAt: user.createdAt,
    })),
    suggestedRole: users.some((user) => user.role === 'owner') ? 'member' : 'owner',
    numbers: numbers.map((number) => ({
      id: number.id,
      phone: number.phone,
      engine: number.engine,
      status: number.status,
      statusReason: number.statusReason,
    })),
    apiKeys: keys.map((key) => ({
      name: key.name,
      hint: key.hint,
      createdAt: key.createdAt,
      lastUsedAt: key.lastUsedAt,
      revokedAt: key.revokedAt,
    })),
  };
}

/** The engines a number can run on; one this build lacks is still listed, marked as such. */
export function engineChoices(gateway: Services): Choice[] {
  const baileysReady = gateway.supervisor.initialStatusFor('baileys') !== undefined;
  return [
    { value: 'sandbox', label: 'Sandbox — simulated, connected at once' },
    {
      value: 'baileys',
      label: baileysReady ? 'Baileys — a real WhatsApp number' : 'Baileys — a real WhatsApp number (not in this build yet)',
    },
    { value: 'cloud', label: 'Cloud API — Meta’s official API; its settings are set on the number’s page' },
  ];
}

export interface OperatorUserView extends AccountUserView {
  account: AccountRef | null;
  isViewer: boolean;
}

export async function presentOperatorUsers(
  gateway: Services,
  operator: OperatorScope,
  viewerId: string,
): Promise<{ users: OperatorUserView[]; accounts: AccountRef[] }> {
  const [users, accounts] = await Promise.all([gateway.accounts.listUsers(operator), gateway.accounts.listAccounts()]);
  const byId = accountsById(accounts);
  return {
    users: users.map((user) => ({
      id: user.id,
      email: user.email,
      role: user.role,
      isOperator: user.isOperator,
      createdAt: user.createdAt,
      account: user.accountId === null ? null : (byId.get(user.accountId) ?? null),
      isViewer: user.id === viewerId,
    })),
    accounts: accounts.map(toAccountRef),
  };
}

export interface OperatorNumberView extends AccountNumberView {
  account: AccountRef;
  /** Sandbox numbers take a status by hand, to rehearse outages. */
  canSetStatus: boolean;
  holder: string | null;
  /** The proxy its WhatsApp connection goes through, redacted (scheme://***@host:port); null for none. */
  proxy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The console's numbers page: every number, and a health card for each the filter keeps (a
 * status, or `paused`; empty keeps all), read from the one list of numbers.
 */
export async function presentOperatorNumbers(
  gateway: NumbersPageServices,
  operator: OperatorScope,
  filter: string,
): Promise<{ numbers: OperatorNumberView[]; accounts: AccountRef[]; statuses: readonly string[]; health: NumberHealthView[] }> {
  const [numbers, accounts, users] = await Promise.all([
    gateway.numbers.listNumbers(operator),
    gateway.accounts.listAccounts(),
    gateway.accounts.listUsers(operator),
  ]);
  const byId = accountsById(accounts);
  const emails = new Map(users.map((user) => [user.id, user.email]));
  const health = await presentNumberHealth(
    gateway,
    numbers,
    operator,
    { canManage: true, operator: true, actionBase: (number) => `/operator/numbers/${encodeURIComponent(number.id)}` },
    { shows: (number, paused) => filter === '' || (filter === 'paused' ? paused : number.status === filter) },
  );
  return {
    numbers: numbers.map((number) => toOperatorNumber(gateway, number, byId, emails)),
    accounts: accounts.map(toAccountRef),
    statuses: sessionStatuses,
    health,
  };
}

export async function presentOperatorNumber(
  gateway: Services & Pick<GatewayServices, 'cloudNumbers' | 'config'>,
  operator: OperatorScope,
  numberId: string,
): Promise<{ number: OperatorNumberView; panel: LinkPanelView; cloud: CloudPanelView | null }> {
  const number = await gateway.numbers.findNumber(operator, numberId);
  const account = await gateway.accounts.getAccount(number.accountId);
  const holder = number.holderUserId === null ? undefined : await gateway.accounts.getUser(number.holderUserId);
  const emails = new Map(holder === undefined ? [] : [[holder.id, holder.email]]);
  return {
    number: toOperatorNumber(gateway, number, accountsById([account]), emails),
    panel: await presentLinkPanel(gateway, operator, number),
    cloud: await presentCloudPanel(gateway, operator, number),
  };
}

function toOperatorNumber(
  gateway: Services,
  number: WhatsAppNumber,
  accounts: Map<string, AccountRef>,
  emails: Map<string, string>,
): OperatorNumberView {
  return {
    id: number.id,
    phone: number.phone,
    engine: number.engine,
    status: number.status,
    statusReason: number.statusReason,
    account: accounts.get(number.accountId) ?? { id: number.accountId, name: number.accountId },
    canSetStatus: gateway.supervisor.allowsSimulatedStatus(number),
    holder: number.holderUserId === null ? null : (emails.get(number.holderUserId) ?? null),
    proxy: number.proxy,
    createdAt: number.createdAt,
    updatedAt: number.updatedAt,
  };
}

export interface OperatorSystemView {
  version: string;
  startedAt: Date;
  uptime: string;
  databaseKind: string;
  database: string;
  counts: Array<{ label: string; value: string }>;
}

export async function presentSystem(gateway: Services): Promise<OperatorSystemView> {
  const status: SystemStatus = await gateway.system.status();
  const { counts } = status;
  return {
    version: status.version,
    startedAt: status.startedAt,
    uptime: humanDuration(status.uptimeMs),
    databaseKind: status.databaseKind === 'postgres' ? 'PostgreSQL (postgres)' : 'SQLite (sqlite)',
    database: status.database,
    counts: [
      { label: 'Accounts', value: formatCount(counts.accounts) },
      { label: 'Users', value: formatCount(counts.users) },
      { label: 'Numbers', value: formatCount(counts.numbers) },
      { label: 'API keys', value: formatCount(counts.apiKeys) },
      { label: 'Messages', value: formatCount(counts.messages) },
      { label: 'Webhooks', value: formatCount(counts.webhooks) },
      { label: 'Webhook deliveries waiting', value: formatCount(counts.pendingDeliveries) },
    ],
  };
}

const DURATION_UNITS: Array<[string, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
];

/** "3 days, 4 hours": the largest unit and the next, which is as exact as an uptime needs to be. */
function humanDuration(ms: number): string {
  const index = DURATION_UNITS.findIndex(([, size]) => ms >= size);
  if (index === -1) return 'less than a second';
  const [unit, size] = DURATION_UNITS[index]!;
  const amount = Math.floor(ms / size);
  const parts = [plural(amount, unit)];
  const next = DURATION_UNITS[index + 1];
  const more = next === undefined ? 0 : Math.floor((ms - amount * size) / next[1]);
  if (next !== undefined && more > 0) parts.push(plural(more, next[0]));
  return parts.join(', ');
}

function plural(amount: number, unit: string): string {
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

function toAccountRef(account: Account): AccountRef {
  return { id: account.id, name: account.name };
}

function accountsById(accounts: Array<Account | AccountRef>): Map<string, AccountRef> {
  return new Map(accounts.map((account) => [account.id, { id: account.id, name: account.name }]));
}
