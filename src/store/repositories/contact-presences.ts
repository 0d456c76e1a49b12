import { sql } from 'kysely';
import type { ContactPresence } from '../../domain/presence.ts';
import type { Executor } from '../database.ts';

/** What a number last heard of one contact's presence. */
export interface HeardPresence {
  /** The contact as the row keys it: a phone, or a LID while its phone is unknown. */
  contact: string;
  presence: ContactPresence;
  groupId: string | null;
  lastSeen: Date | null;
  heardAt: Date;
}

/**
 * Keeps the report as what the number last heard of the contact. A report older than the one
 * kept (two committed out of order) changes nothing; a report without a last seen keeps the one
 * the contact shared before.
 */
export async function recordHeardPresence(db: Executor, numberId: string, heard: HeardPresence): Promise<void> {
  await db
    .insertInto('contact_presences')
    .values({
      number_id: numberId,
      contact: heard.contact,
      presence: heard.presence,
      group_id: heard.groupId,
      last_seen_at: heard.lastSeen?.getTime() ?? null,
      heard_at: heard.heardAt.getTime(),
    })
    .onConflict((conflict) =>
      conflict
        .columns(['number_id', 'contact'])
        .doUpdateSet({
          presence: sql`excluded.presence`,
          group_id: sql`excluded.group_id`,
          last_seen_at: sql`coalesce(excluded.last_seen_at, contact_presences.last_seen_at)`,
          heard_at: sql`excluded.heard_at`,
        })
        .where(sql<boolean>`excluded.heard_at >= contact_presences.heard_at`),
    )
    .execute();
}

/** The latest of what the number heard of any of `contacts` (one person's phone and LID). */
export async function findHeardPresence(db: Executor, numberId: string, contacts: readonly string[]): Promise<HeardPresence | undefined> {
  if (contacts.length === 0) return undefined;
  const row = await db
    .selectFrom('contact_presences')
    .selectAll()
    .where('number_id', '=', numberId)
    .where('contact', 'in', [...contacts])
    .orderBy('heard_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    contact: row.contact,
    presence: row.presence as ContactPresence,
    groupId: row.group_id,
    lastSeen: row.last_seen_at === null ? null : new Date(Number(row.last_seen_at)),
    heardAt: new Date(Number(row.heard_at)),
  };
}
