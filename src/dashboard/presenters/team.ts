import type { UserRole } from '../../domain/model.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { Viewer, ScopedAccount } from '../context.ts';
import { describeCreator } from './keys.ts';
import { usersById } from './shared.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'team'>;

export interface TeamMemberView {
  id: string;
  email: string;
  role: UserRole;
  createdAt: Date;
  isViewer: boolean;
}

export interface OpenInviteView {
  id: string;
  role: UserRole;
  createdAt: Date;
  expiresAt: Date;
  /** Who made it: a member's email, or "an operator" for one made from outside the account. */
  createdBy: string;
}

/** A working key whose maker was removed: the team page offers to revoke it. */
export interface OrphanedKeyView {
  id: string;
  name: string;
  hint: string;
  createdBy: string;
  lastUsedAt: Date | null;
}

export interface TeamView {
  accountName: string;
  /** Only owners manage the team; everyone else sees the members. */
  viewerIsOwner: boolean;
  members: TeamMemberView[];
  /** Empty for non-owners: open invites are the owners' business. */
  invites: OpenInviteView[];
  /** Empty for non-owners: unrevoked keys made by users since removed. */
  orphanedKeys: OrphanedKeyView[];
}

/** What the page shows besides the team: a failed action, a new invite link, the role picked. */
export interface TeamPageState {
  error?: string;
  inviteLink?: string;
  inviteRole: string;
}

export async function presentTeam(gateway: Services, viewer: Viewer, account: ScopedAccount): Promise<TeamView> {
  const viewerIsOwner = viewer.user.role === 'owner';
  const [users, invites, keys] = await Promise.all([
    gateway.accounts.listUsers(account.scope),
    viewerIsOwner ? gateway.team.listOpenInvites(account.id) : Promise.resolve([]),
    viewerIsOwner ? gateway.apiKeys.listKeys(account.id) : Promise.resolve([]),
  ]);
  const members = usersById(users);
  return {
    accountName: account.name,
    viewerIsOwner,
    members: users.map((user) => ({
      id: user.id,
      email: user.email,
      role: user.role,
      createdAt: user.createdAt,
      isViewer: user.id === viewer.user.id,
    })),
    invites: invites.map((invite) => ({
      id: invite.id,
      role: invite.role,
      createdAt: invite.createdAt,
      expiresAt: invite.expiresAt,
      createdBy: (invite.createdByUserId === null ? undefined : members.get(invite.createdByUserId)?.email) ?? 'an operator',
    })),
    orphanedKeys: keys
      .filter((key) => key.revokedAt === null && key.createdByUserId === null && key.createdByEmail !== null)
      .map((key) => ({
        id: key.id,
        name: key.name,
        hint: key.hint,
        createdBy: describeCreator(key, members)!,
        lastUsedAt: key.lastUsedAt,
      })),
  };
}

export interface InviteView {
  accountName: string;
  role: UserRole;
  expiresAt: Date;
  /** Who the browser is signed in as now; joining signs that session out. */
  signedInAs: string | null;
}

/** The invite behind a link; an unusable link throws invite_not_found (404). */
export async function presentInvite(gateway: Services, token: string, viewer: Viewer | null): Promise<InviteView> {
  const invite = await gateway.team.findUsableInvite(token);
  const account = await gateway.accounts.getAccount(invite.accountId);
  return { accountName: account.name, role: invite.role, expiresAt: invite.expiresAt, signedInAs: viewer?.user.email ?? null };
}
