import { sql } from 'kysely';
import type { User, UserRole } from '../../domain/model.ts';
import type { Executor } from '../database.ts';
import type { UserRow } from '../schema-accounts.ts';
import { scopedAccountId, type TenantScope } from '../../domain/tenant-scope.ts';

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    accountId: row.account_id,
    email: row.email,
    role: row.role as UserRole,
    isOperator: row.is_operator === 1,
    createdAt: new Date(row.created_at),
  };
}

export async function insertUser(db: Executor, user: User, passwordHash: string): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: user.id,
      account_id: user.accountId,
      email: user.email,
      password_hash: passwordHash,
      role: user.role,
      is_operator: user.isOperator ? 1 : 0,
      created_at: user.createdAt.getTime(),
    })
    .execute();
}

export async function findUserById(db: Executor, id: string): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toUser(row);
}

/** `email` must already be normalised (trimmed, lower-cased). */
export async function findUserByEmail(db: Executor, email: string): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  return row && toUser(row);
}

export async function countOperators(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('is_operator', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The users the scope may see: one account's, or every user for the operator. */
export async function listUsers(db: Executor, scope: TenantScope): Promise<User[]> {
  let query = db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id');
  const accountId = scopedAccountId(scope);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  return (await query.execute()).map(toUser);
}

/** A user with the stored password hash, for sign-in only. */
export async function findUserCredentials(
  db: Executor,
  by: { email: string } | { id: string },
): Promise<{ user: User; passwordHash: string } | undefined> {
  let query = db.selectFrom('users').selectAll();
  query = 'email' in by ? query.where('email', '=', by.email) : query.where('id', '=', by.id);
  const row = await query.executeTakeFirst();
  return row && { user: toUser(row), passwordHash: row.password_hash };
}

export async function updatePasswordHash(db: Executor, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

export async function updateUserRole(db: Executor, id: string, role: UserRole): Promise<void> {
  await db.updateTable('users').set({ role }).where('id', '=', id).execute();
}

export async function updateUserOperator(db: Executor, id: string, isOperator: boolean): Promise<void> {
  await db
    .updateTable('users')
    .set({ is_operator: isOperator ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}

export async function deleteUser(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute();
}

export async function countOwners(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Serializes changes to who owns an account and who operates the gateway, until the transaction
 * ends, so that two "demote the other owner" requests cannot both pass the last-owner check.
 * SQLite runs one write transaction at a time already; PostgreSQL needs an explicit lock.
 */
export async function lockMembershipChanges(trx: Executor, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${MEMBERSHIP_LOCK_KEY})`.execute(trx);
}

// Any fixed number works; it names this one lock among the database's advisory locks.
const MEMBERSHIP_LOCK_KEY = 720_401;
