import type { ApiKey, User } from '../../domain/model.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { usersById } from './shared.ts';
import type { ScopedAccount } from '../context.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys'>;

/** An API key as the keys page lists it: never the key itself, only its hint. */
export interface KeyRowView {
  id: string;
  name: string;
  hint: string;
  scopes: readonly string[];
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

/**
 * Who made a key, as the keys page says it: the member's email; "a removed user (email)" once
 * that member is gone, so the others can see which keys to revoke; or null for the CLI's.
 */
export function describeCreator(key: ApiKey, members: Map<string, User>): string | null {
  const member = key.createdByUserId === null ? undefined : members.get(key.createdByUserId);
  if (member !== undefined) return member.email;
  if (key.createdByEmail !== null) return key.createdByUserId === null ? `a removed user (${key.createdByEmail})` : key.createdByEmail;
  return null;
}

export async function presentKeys(gateway: Services, account: ScopedAccount, canManage: boolean): Promise<KeysView> {
  const [keys, users] = await Promise.all([gateway.apiKeys.listKeys(account.id), gateway.accounts.listUsers(account.scope)]);
  const holders = usersById(users);
  return {
    canManage,
    keys: keys.map((key) => ({
      id: key.id,
      name: key.name,
      hint: key.hint,
      scopes: key.scopes,
      createdAt: key.createdAt,
      createdBy: describeCreator(key, holders),
      lastUsedAt: key.lastUsedAt,
      revoked: key.revokedAt !== null,
    })),
  };
}
