import type { User } from '../../domain/model.ts';
import type { Executor } from '../database.ts';
import { toUser } from './users.ts';

export interface DashboardSession {
  id: string;
  userId: string;
  createdAt: Date;
  lastSeenAt: Date;
}

export interface NewDashboardSession extends DashboardSession {
  tokenHash: string;
  ip: string | null;
  userAgent: string | null;
}

export async function insertSession(db: Executor, session: NewDashboardSession): Promise<void> {
  await db
    .insertInto('dashboard_sessions')
    .values({
      id: session.id,
      token_hash: session.tokenHash,
      user_id: session.userId,
      created_at: session.createdAt.getTime(),
      last_seen_at: session.lastSeenAt.getTime(),
      ip: session.ip,
      user_agent: session.userAgent,
    })
    .execute();
}

/** The session behind a token, with its user, in one read. */
export async function findSessionByTokenHash(
  db: Executor,
  tokenHash: string,
): Promise<{ session: DashboardSession; user: User } | undefined> {
  const row = await db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .select(['s.id as session_id', 's.created_at as session_created_at', 's.last_seen_at as session_last_seen_at'])
    .where('s.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    session: {
      id: row.session_id,
      userId: row.id,
      createdAt: new Date(Number(row.session_created_at)),
      lastSeenAt: new Date(Number(row.session_last_seen_at)),
    },
    user: toUser(row),
  };
}

export async function touchSession(db: Executor, id: string, at: Date): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ last_seen_at: at.getTime() }).where('id', '=', id).execute();
}

export async function deleteSession(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id', '=', id).execute();
}

/** Signs a user out everywhere, or everywhere but the session given. */
export async function deleteSessionsOfUser(db: Executor, userId: string, exceptSessionId?: string): Promise<void> {
  let query = db.deleteFrom('dashboard_sessions').where('user_id', '=', userId);
  if (exceptSessionId !== undefined) query = query.where('id', '!=', exceptSessionId);
  await query.execute();
}

export async function deleteExpiredSessions(db: Executor, idleCutoff: Date, absoluteCutoff: Date): Promise<void> {
  await db
    .deleteFrom('dashboard_sessions')
    .where((eb) => eb.or([eb('last_seen_at', '<', idleCutoff.getTime()), eb('created_at', '<', absoluteCutoff.getTime())]))
    .execute();
}
