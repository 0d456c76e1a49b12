import type { GatewayServices } from '../../ports/gateway-services.ts';
import { toNumberRow, usersById, type NumberRowView } from './shared.ts';
import type { ScopedAccount } from '../context.ts';
import type { PauseReason } from '../../domain/number-pauses.ts';
import { presentNumberHealth, type NumberHealthView } from './number-health.ts';
import {
  presentAccountPolicy,
  presentNumberSending,
  readSendingOverviews,
  type NumberSendingView,
  type PolicyView,
} from './number-sending.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'groups' | 'history' | 'numbers' | 'pauses' | 'sendQueues'>;

/** What the user typed into one number's "Simulate an incoming message" form, kept on a failure. */
export interface SimulationDraft {
  numberId: string;
  fromPhone: string;
  message: string;
  error: string | undefined;
}

export interface NumbersView {
  numbers: NumberRowView[];
  /** The numbers that can simulate incoming messages, each with its own form. */
  sandboxNumbers: NumberRowView[];
  draft: SimulationDraft | undefined;
  /** The groups each number is in, as it last saw them. */
  groups: GroupRowView[];
  /** A health card per number, with the owner's actions for owners and admins. */
  health: NumberHealthView[];
  canResume: boolean;
  /** Whether the viewer may change the numbers' call settings (owners and admins). */
  canChangeSettings: boolean;
  /** Each number's send policy, queue and last day's sends; owners and admins change and clear. */
  sending: NumberSendingView[];
  /** The account's default send policy (there is no account settings page; it lives here). */
  accountPolicy: PolicyView;
}

export const PAUSE_REASONS: Record<PauseReason, string> = {
  restricted: 'WhatsApp restricted it (463)',
  reachout_timelock: 'WhatsApp locked reaching out to new chats',
  rate_limited: 'WhatsApp is rate-limiting it',
  logged_out: 'its phone logged it out; link it again',
  manual: 'paused by hand',
};

export interface GroupRowView {
  phone: string;
  groupId: string;
  subject: string;
  size: number;
  isAdmin: boolean;
}

/** The live-refresh payload of app.js: only what a badge needs, only the viewer's account. */
export interface NumberStatusesView {
  /** `status_since`: when the status last changed, for the health cards' "Status since" (ISO 8601). */
  numbers: Array<{ id: string; phone: string; status: string; status_since: string }>;
}

export async function presentNumbers(
  gateway: Services,
  account: ScopedAccount,
  canManage: boolean,
  draft?: SimulationDraft,
): Promise<NumbersView> {
  const [numbers, users] = await Promise.all([gateway.numbers.listNumbers(account.scope), gateway.accounts.listUsers(account.scope)]);
  const holders = usersById(users);
  const rows = numbers.map((number) => toNumberRow(number, holders));
  const groups = (await gateway.groups.knownGroups(numbers)).map((group) => ({
    phone: group.phone,
    groupId: group.groupId,
    subject: group.subject,
    size: group.size,
    isAdmin: group.isAdmin,
  }));
  // Each number's queue is read once, for its sending card and its health card both.
  const [overviews, accountPolicy] = await Promise.all([
    readSendingOverviews(gateway, numbers, new Date()),
    presentAccountPolicy(gateway, account.id),
  ]);
  const health = await presentNumberHealth(
    gateway,
    numbers,
    account.scope,
    { canManage, operator: false, actionBase: (number) => `/numbers/${encodeURIComponent(number.id)}` },
    { queues: new Map([...overviews].map(([id, overview]) => [id, overview.queue])) },
  );
  const sending = presentNumberSending(numbers, overviews);
  return {
    numbers: rows,
    sandboxNumbers: rows.filter((row) => row.isSandbox),
    draft,
    groups,
    health,
    canResume: canManage,
    canChangeSettings: canManage,
    sending,
    accountPolicy,
  };
}

export async function presentNumberStatuses(gateway: Services, account: ScopedAccount): Promise<NumberStatusesView> {
  const numbers = await gateway.numbers.listNumbers(account.scope);
  return {
    numbers: numbers.map((number) => ({
      id: number.id,
      phone: number.phone,
      status: number.status,
      status_since: number.statusChangedAt.toISOString(),
    })),
  };
}
