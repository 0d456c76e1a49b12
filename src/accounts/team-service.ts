import { recordAudit } from '../audit/audit-trail.ts';
import { SYSTEM_ACTOR, type AuditActor } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { rolesAbove, userRoles, type User, type UserRole } from '../domain/model.ts';
import { generateSecretToken, sha256Hex } from '../domain/secret-token.ts';
import type { Executor, Store } from '../store/database.ts';
import {
  deleteInvite,
  deleteOpenInvitesOf,
  findInviteByTokenHash,
  insertInvite,
  listOpenInvites,
  markInviteAccepted,
  type UserInvite,
} from '../store/repositories/invites.ts';
import { deleteSessionsOfUser } from '../store/repositories/sessions.ts';
import {
  countOperators,
  countOwners,
  deleteUser,
  findUserById,
  lockMembershipChanges,
  updatePasswordHash,
  updateUserOperator,
  updateUserRole,
} from '../store/repositories/users.ts';
import type { AccountsService } from './accounts-service.ts';
import { generatePassword, PasswordHasher } from './passwords.ts';

/** How long an invite link works. A week covers a weekend and a holiday. */
const INVITE_LIFETIME_MS = 7 * 24 * 3_600_000;

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
    private readonly passwords = new PasswordHasher(),
  ) {}

  /** Makes an invite link, with its audit row (never the link's secret). */
  async createInvite(
    accountId: string,
    role: string,
    createdByUserId: string,
    now = new Date(),
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<CreatedInvite> {
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
    await this.store.db.transaction().execute(async (trx) => {
      await insertInvite(trx, invite, hash);
      await recordAudit(trx, actor, 'invite.created', {
        accountId,
        targetId: invite.id,
        details: { role: invite.role, expires_at: invite.expiresAt.toISOString() },
      });
    });
    return { invite, token };
  }

  listOpenInvites(accountId: string, now = new Date()): Promise<UserInvite[]> {
    return listOpenInvites(this.store.db, accountId, now);
  }

  async revokeInvite(accountId: string, inviteId: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      if (!(await deleteInvite(trx, inviteId, accountId))) {
        throw new AppError('invite_not_found', 'That invite does not exist or was already used.');
      }
      await recordAudit(trx, actor, 'invite.revoked', { accountId, targetId: inviteId });
    });
  }

  /** The invite behind a link, if it can still be used. */
  async findUsableInvite(token: string, now = new Date()): Promise<UserInvite> {
    const invite = await findInviteByTokenHash(this.store.db, sha256Hex(token));
    if (invite === undefined || invite.acceptedAt !== null || invite.expiresAt.getTime() <= now.getTime()) {
      throw new AppError('invite_not_found', 'This invite link is not valid. It may have expired or been used; ask for a new one.');
    }
    return invite;
  }

  /**
   * Creates the invited user. The user's insert and the invite's use are one transaction, so an
   * invite makes exactly one user, even when two tabs race or the process dies in between.
   *
   * An email that already has a user (in any account, or an operator's) makes nothing, leaves the
   * invite usable, and returns undefined rather than an error: callers must answer it exactly as
   * they answer a join, or an invite link would tell anyone which emails are registered. The work
   * done is the same either way (the password is hashed before the insert finds the email taken).
   */
  async acceptInvite(token: string, email: string, password: string, now = new Date()): Promise<User | undefined> {
    const invite = await this.findUsableInvite(token, now);
    const prepared = await this.accounts.prepareUser({ accountId: invite.accountId, email, password, role: invite.role });
    try {
      await this.store.db.transaction().execute(async (trx) => {
        await this.accounts.insertPreparedUser(trx, prepared);
        if (!(await markInviteAccepted(trx, invite.id, prepared.user.id, now))) {
          throw new AppError('invite_not_found', 'This invite link has just been used; ask for a new one.');
        }
      });
    } catch (error) {
      if (error instanceof AppError && error.code === 'email_already_registered') return undefined;
      throw error;
    }
    return prepared.user;
  }

  /** One user of the account; a user of another account, or of none, is not found. */
  getMember(accountId: string, userId: string): Promise<User> {
    return memberOf(this.store.db, accountId, userId);
  }

  async changeRole(accountId: string, userId: string, role: string, actor: AuditActor = SYSTEM_ACTOR): Promise<User> {
    const newRole = parseRole(role);
    return this.changeMembership(async (trx) => {
      const user = await memberOf(trx, accountId, userId);
      if (user.role === 'owner' && newRole !== 'owner') await keepAnOwner(trx, accountId);
      await updateUserRole(trx, userId, newRole);
      // An invite may grant no more than its maker now holds: a demotion revokes the rest.
      if (rolesAbove(user.role).length < rolesAbove(newRole).length) await deleteOpenInvitesOf(trx, userId, rolesAbove(newRole));
      await recordAudit(trx, actor, 'user.role_changed', {
        accountId,
        targetId: userId,
        details: { email: user.email, from: user.role, to: newRole },
      });
      return { ...user, role: newRole };
    });
  }

  /** `actingUserId` is who asks: nobody removes themselves, since they would be cut off mid-page. */
  async removeMember(accountId: string, userId: string, actor: AuditActor, actingUserId?: string): Promise<User> {
    return this.changeMembership(async (trx) => {
      const user = await memberOf(trx, accountId, userId);
      if (userId === actingUserId) throw new AppError('invalid_argument', 'You cannot remove yourself; ask another owner.');
      // An operator runs the whole gateway; an account's owner must not be able to delete one.
      if (user.isOperator) throw new AppError('forbidden', 'This user is an operator of the gateway; only an operator can remove them.');
      if (user.role === 'owner') await keepAnOwner(trx, accountId);
      // A saved invite link of a removed user must not let them, or anyone, back in.
      await deleteOpenInvitesOf(trx, userId, userRoles);
      await deleteUser(trx, userId);
      await recordAudit(trx, actor, 'user.removed', { accountId, targetId: userId, details: { email: user.email, role: user.role } });
      return user;
    });
  }

  /**
   * The operator's reset: a new generated password, shown once, and every session ended. The
   * audit row says that it was reset, never to what.
   */
  async resetPassword(userId: string, actor: AuditActor, actingUserId?: string): Promise<{ user: User; password: string }> {
    // A reset ends every session, the acting one too; one's own password is changed knowing the old one.
    if (userId === actingUserId) throw new AppError('invalid_argument', 'Change your own password on the Password page instead.');
    const user = await this.accounts.getUser(userId);
    const password = generatePassword();
    const passwordHash = await this.passwords.hash(password);
    await this.store.db.transaction().execute(async (trx) => {
      await updatePasswordHash(trx, userId, passwordHash);
      await deleteSessionsOfUser(trx, userId);
      await recordAudit(trx, actor, 'user.password_reset', { accountId: user.accountId, targetId: userId, details: { email: user.email } });
    });
    return { user, password };
  }

  async setOperator(userId: string, isOperator: boolean, actingUserId: string, actor: AuditActor): Promise<User> {
    if (!isOperator && userId === actingUserId) {
      throw new AppError('invalid_argument', 'You cannot remove your own operator rights; ask another operator.');
    }
    return this.changeMembership(async (trx) => {
      const user = await findUserById(trx, userId);
      if (user === undefined) throw new AppError('user_not_found', `There is no user ${userId}.`);
      if (!isOperator && user.accountId === null) {
        throw new AppError('invalid_argument', 'This user belongs to no account, so it would be left with nothing to open.');
      }
      if (!isOperator && user.isOperator && (await countOperators(trx)) <= 1) {
        throw new AppError('invalid_argument', 'The gateway needs at least one operator.');
      }
      await updateUserOperator(trx, userId, isOperator);
      await recordAudit(trx, actor, 'user.operator_changed', {
        accountId: user.accountId,
        targetId: userId,
        details: { email: user.email, is_operator: isOperator },
      });
      return { ...user, isOperator };
    });
  }

  /** Runs a change to roles or operator rights under the membership lock (see lockMembershipChanges). */
  private changeMembership<T>(work: (trx: Executor) => Promise<T>): Promise<T> {
    return this.store.db.transaction().execute(async (trx) => {
      await lockMembershipChanges(trx, this.store.dialect);
      return work(trx);
    });
  }
}

async function memberOf(db: Executor, accountId: string, userId: string): Promise<User> {
  const user = await findUserById(db, userId);
  if (user === undefined || user.accountId !== accountId)
    throw new AppError('user_not_found', `There is no user ${userId} in this account.`);
  return user;
}

async function keepAnOwner(db: Executor, accountId: string): Promise<void> {
  if ((await countOwners(db, accountId)) <= 1) {
    throw new AppError('last_owner', 'An account needs at least one owner. Make someone else an owner first.');
  }
}

function parseRole(role: string): UserRole {
  if (!(userRoles as readonly string[]).includes(role)) {
    throw new AppError('invalid_argument', `Role must be one of ${userRoles.join(', ')}; got "${role}".`);
  }
  return role as UserRole;
}
