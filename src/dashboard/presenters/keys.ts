import type { Account } from '../../domain/model.ts';
import type { Gateway } from '../../main.ts';
import { usersById } from './shared.ts';
import type { ScopedAccount } from '../context.ts';

/** An API key as the keys page lists it: never the key itself, only its hint. */
export interface KeyRowView {
  id: string;
  name: string;
  hint: string;
  createdAt: Date;
  /** The creator's email; null when unknown (made by the CLI, or by a user since removed). */
  createdBy: string | null;
  lastUsedAt: Date | null;
  revoked: boolean;
}

export interface KeysView {
  keys: KeyRowView[];
  canManage: boolean;
}

export async function presentKeys(gateway: Gateway, account: ScopedAccount, canManage: boolean): Promise<KeysView> {
  const [keys, users] = await Promise.all([gateway.apiKeys.listKeys(account.id), gateway.accounts.listUsers(account.scope)]);
  const holders = usersById(users);
  return {
    canManage,
    keys: keys.map((key) => ({
      id: key.id,
      name: key.name,
      hint: key.hint,
      createdAt: key.createdAt,
      createdBy: key.createdByUserId === null ? null : (holders.get(key.createdByUserId)?.email ?? null),
      lastUsedAt: key.lastUsedAt,
      revoked: key.revokedAt !== null,
    })),
  };
}
