import type { UserRole } from '../../domain/model.ts';
import type { Executor } from '../database.ts';
import type { UserInviteRow } from '../schema-accounts.ts';

export interface UserInvite {
  id: string;
  accountId: string;
  role: UserRole;
  createdByUserId: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
}

function toInvite(row: UserInviteRow): UserInvite {
  return {
    id: row.id,
    accountId: row.account_id,
    role: row.role as UserRole,
    createdByUserId: row.created_by_user_id,
    createdAt: new Date(Number(row.created_at)),
    expiresAt: new Date(Number(row.expires_at)),
    acceptedAt: row.accepted_at === null ? null : new Date(Number(row.accepted_at)),
  };
}

export async function insertInvite(db: Executor, invite: UserInvite, tokenHash: string): Promise<void> {
  await db
    .insertInto('user_invites')
    .values({
      id: invite.id,
      account_id: invite.accountId,
      token_hash: tokenHash,
      role: invite.role,
      created_by_user_id: invite.createdByUserId,
      created_at: invite.createdAt.getTime(),
      expires_at: invite.expiresAt.getTime(),
      accepted_at: null,
      accepted_user_id: null,
    })
    .execute();
}

export async function findInviteByTokenHash(db: Executor, tokenHash: string): Promise<UserInvite | undefined> {
  const row = await db.selectFrom('user_invites').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return row && toInvite(row);
}

/** Invites not yet used and not yet expired, newest first. */
export async function listOpenInvites(db: Executor, accountId: string, now: Date): Promise<UserInvite[]> {
  const rows = await db
    .selectFrom('user_invites')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .where('expires_at', '>', now.getTime())
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(toInvite);
}

/** Uses up an invite. False when it was used first or has expired: an invite makes one user. */
export async function markInviteAccepted(db: Executor, id: string, userId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('user_invites')
    .set({ accepted_at: at.getTime(), accepted_user_id: userId })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('expires_at', '>', at.getTime())
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes an unused invite; a used one stays, as the record of who joined through it. */
export async function deleteInvite(db: Executor, id: string, accountId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('user_invites')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * Revokes the unused invites a user made that grant one of `roles`: what they may no longer
 * hand out, once removed or demoted. Returns how many went.
 */
export async function deleteOpenInvitesOf(db: Executor, userId: string, roles: readonly UserRole[]): Promise<number> {
  if (roles.length === 0) return 0;
  const result = await db
    .deleteFrom('user_invites')
    .where('created_by_user_id', '=', userId)
    .where('accepted_at', 'is', null)
    .where('role', 'in', [...roles])
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
