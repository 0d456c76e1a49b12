import type { Account, UserRole } from '../../domain/model.ts';
import type { Gateway } from '../../main.ts';
import type { Viewer, ScopedAccount } from '../context.ts';

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
}

export interface TeamView {
  accountName: string;
  /** Only owners manage the team; everyone else sees the members. */
  viewerIsOwner: boolean;
  members: TeamMemberView[];
  /** Empty for non-owners: open invites are the owners' business. */
  invites: OpenInviteView[];
}

/** What the page shows besides the team: a failed action, a new invite link, the role picked. */
export interface TeamPageState {
  error?: string;
  inviteLink?: string;
  inviteRole: string;
}

export async function presentTeam(gateway: Gateway, viewer: Viewer, account: ScopedAccount): Promise<TeamView> {
  const viewerIsOwner = viewer.user.role === 'owner';
  const [users, invites] = await Promise.all([
    gateway.accounts.listUsers(account.scope),
    viewerIsOwner ? gateway.team.listOpenInvites(account.id) : Promise.resolve([]),
  ]);
  return {
    accountName: account.name,
    viewerIsOwner,
    members: users.map((user) => ({ id: user.id, email: user.email, role: user.role, createdAt: user.createdAt, isViewer: user.id === viewer.user.id })),
    invites: invites.map((invite) => ({ id: invite.id, role: invite.role, createdAt: invite.createdAt, expiresAt: invite.expiresAt })),
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
export async function presentInvite(gateway: Gateway, token: string, viewer: Viewer | null): Promise<InviteView> {
  const invite = await gateway.team.findUsableInvite(token);
  const account = await gateway.accounts.getAccount(invite.accountId);
  return { accountName: account.name, role: invite.role, expiresAt: invite.expiresAt, signedInAs: viewer?.user.email ?? null };
}
