import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { userRoles, type User, type UserRole } from '../domain/model.ts';
import { generateSecretToken, sha256Hex } from '../domain/secret-token.ts';
import type { Store } from '../store/database.ts';
import { deleteInvite, findInviteByTokenHash, insertInvite, listOpenInvites, markInviteAccepted, type UserInvite } from '../store/repositories/invites.ts';
import { deleteSessionsOfUser } from '../store/repositories/sessions.ts';
import { countOwners, deleteUser, findUserById, updatePasswordHash, updateUserOperator, updateUserRole } from '../store/repositories/users.ts';
import type { AccountsService } from './accounts-service.ts';
import { generatePassword, hashPassword } from './passwords.ts';

/** How long an invite link works. A week covers a weekend and a holiday. */
export const INVITE_LIFETIME_MS = 7 * 24 * 3_600_000;

export interface CreatedInvite {
  invite: UserInvite;
  /** The secret part of the link: shown once, stored as a hash. */
  token: string;
}

/**
 * The members of an account: invites, roles and removal, and the operator's user tools. Every
 * method that takes an accountId acts only on users of that account, whatever id it is given.
 */
export class TeamService {
  constructor(
    private readonly store: Store,
    private readonly accounts: AccountsService,
  ) {}

  async createInvite(accountId: string, role: string, createdByUserId: string, now = new Date()): Promise<CreatedInvite> {
    await this.accounts.getAccount(accountId);
    const invite: UserInvite = {
      id: newId('invite'),
      accountId,
      role: parseRole(role),
      createdByUserId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITE_LIFETIME_MS),
      acceptedAt: null,
    };
    const { token, hash } = generateSecretToken();
    await insertInvite(this.store.db, invite, hash);
    return { invite, token };
  }

  listOpenInvites(accountId: string, now = new Date()): Promise<UserInvite[]> {
    return listOpenInvites(this.store.db, accountId, now);
  }

  async revokeInvite(accountId: string, inviteId: string): Promise<void> {
    if (!(await deleteInvite(this.store.db, inviteId, accountId))) {
      throw new AppError('invite_not_found', 'That invite does not exist or was already used.');
    }
  }

  /** The invite behind a link, if it can still be used. */
  async findUsableInvite(token: string, now = new Date()): Promise<UserInvite> {
    const invite = await findInviteByTokenHash(this.store.db, sha256Hex(token));
    if (invite === undefined || invite.acceptedAt !== null || invite.expiresAt.getTime() <= now.getTime()) {
      throw new AppError('invite_not_found', 'This invite link is not valid. It may have expired or been used; ask for a new one.');
    }
    return invite;
  }

  /** Creates the invited user. An invite makes exactly one user, even when two tabs race. */
  async acceptInvite(token: string, email: string, password: string, now = new Date()): Promise<User> {
    const invite = await this.findUsableInvite(token, now);
    const { user } = await this.accounts.createUser({ accountId: invite.accountId, email, password, role: invite.role });
    if (!(await markInviteAccepted(this.store.db, invite.id, user.id, now))) {
      await deleteUser(this.store.db, user.id);
      throw new AppError('invite_not_found', 'This invite link has just been used; ask for a new one.');
    }
    return user;
  }

  async changeRole(accountId: string, userId: string, role: string): Promise<User> {
    const user = await this.memberOf(accountId, userId);
    const newRole = parseRole(role);
    if (user.role === 'owner' && newRole !== 'owner') await this.keepAnOwner(accountId);
    await updateUserRole(this.store.db, userId, newRole);
    return { ...user, role: newRole };
  }

  /** `actingUserId` is who asks: nobody removes themselves, since they would be cut off mid-page. */
  async removeMember(accountId: string, userId: string, actingUserId?: string): Promise<User> {
    const user = await this.memberOf(accountId, userId);
    if (userId === actingUserId) throw new AppError('invalid_argument', 'You cannot remove yourself; ask another owner.');
    if (user.role === 'owner') await this.keepAnOwner(accountId);
    await deleteUser(this.store.db, userId);
    return user;
  }

  /** The operator's reset: a new generated password, shown once, and every session ended. */
  async resetPassword(userId: string): Promise<{ user: User; password: string }> {
    const user = await this.accounts.getUser(userId);
    const password = generatePassword();
    await updatePasswordHash(this.store.db, userId, await hashPassword(password));
    await deleteSessionsOfUser(this.store.db, userId);
    return { user, password };
  }

  async setOperator(userId: string, isOperator: boolean, actingUserId: string): Promise<User> {
    const user = await this.accounts.getUser(userId);
    if (!isOperator && userId === actingUserId) {
      throw new AppError('invalid_argument', 'You cannot remove your own operator rights; ask another operator.');
    }
    if (!isOperator && user.accountId === null) {
      throw new AppError('invalid_argument', 'This user belongs to no account, so it would be left with nothing to open.');
    }
    await updateUserOperator(this.store.db, userId, isOperator);
    return { ...user, isOperator };
  }

  private async memberOf(accountId: string, userId: string): Promise<User> {
    const user = await findUserById(this.store.db, userId);
    if (user === undefined || user.accountId !== accountId) throw new AppError('user_not_found', `There is no user ${userId} in this account.`);
    return user;
  }

  private async keepAnOwner(accountId: string): Promise<void> {
    if ((await countOwners(this.store.db, accountId)) <= 1) {
      throw new AppError('last_owner', 'An account needs at least one owner. Make someone else an owner first.');
    }
  }
}

function parseRole(role: string): UserRole {
  if (!(userRoles as readonly string[]).includes(role)) {
    throw new AppError('invalid_argument', `Role must be one of ${userRoles.join(', ')}; got "${role}".`);
  }
  return role as UserRole;
}
