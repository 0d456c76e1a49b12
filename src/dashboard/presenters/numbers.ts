import type { Account } from '../../domain/model.ts';
import type { Gateway } from '../../main.ts';
import { toNumberRow, usersById, type NumberRowView } from './shared.ts';
import type { ScopedAccount } from '../context.ts';

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
  /** Whether the viewer may change the numbers' call settings (owners and admins). */
  canChangeSettings: boolean;
}

export interface GroupRowView {
  phone: string;
  groupId: string;
  subject: string;
  size: number;
  isAdmin: boolean;
}

/** The live-refresh payload of app.js: only what a badge needs, only the viewer's account. */
export interface NumberStatusesView {
  numbers: Array<{ id: string; phone: string; status: string }>;
}

export async function presentNumbers(gateway: Gateway, account: ScopedAccount, canChangeSettings: boolean, draft?: SimulationDraft): Promise<NumbersView> {
  const [numbers, users] = await Promise.all([gateway.numbers.listNumbers(account.scope), gateway.accounts.listUsers(account.scope)]);
  const holders = usersById(users);
  const rows = numbers.map((number) => toNumberRow(number, holders));
  const groups = (await gateway.groups.knownGroups(numbers)).map((group) => ({ phone: group.phone, groupId: group.groupId, subject: group.subject, size: group.size, isAdmin: group.isAdmin }));
  return { numbers: rows, sandboxNumbers: rows.filter((row) => row.isSandbox), draft, groups, canChangeSettings };
}

export async function presentNumberStatuses(gateway: Gateway, account: ScopedAccount): Promise<NumberStatusesView> {
  const numbers = await gateway.numbers.listNumbers(account.scope);
  return { numbers: numbers.map((number) => ({ id: number.id, phone: number.phone, status: number.status })) };
}
