import { sql } from 'kysely';
import type { Group, GroupChange } from '../../domain/groups.ts';
import { roleOf } from '../../domain/groups.ts';
import type { Message, MessageGroup, WhatsAppNumber } from '../../domain/model.ts';
import type { Executor } from '../database.ts';

// Groups as the database knows them: the group chat of each group message, and each number's
// groups as it last saw them (migration 0016, ADR 0023).

/** A group as one of our numbers last saw it, without its participants. */
export interface KnownGroup {
  groupId: string;
  subject: string;
  size: number;
  isAdmin: boolean;
  /** False once the number left the group or was removed from it. */
  isMember: boolean;
  updatedAt: Date;
}

/** Records which group a message was written in, with the subject the group had then. */
export async function insertMessageGroups(db: Executor, messages: readonly Message[]): Promise<void> {
  const rows = messages.flatMap((message) =>
    message.group == null
      ? []
      : [
          {
            message_id: message.id,
            account_id: message.accountId,
            group_id: message.group.id,
            group_subject: message.group.subject ?? '',
            mentions: message.mentions !== undefined && message.mentions.length > 0 ? JSON.stringify(message.mentions) : null,
          },
        ],
  );
  if (rows.length > 0) await db.insertInto('message_groups').values(rows).execute();
}

/** The message with the group chat (and the mentions) a joined message_groups row names, when there is one. */
export function withGroup<T extends Message>(
  message: T,
  row: { group_id: string | null; group_subject: string | null; mentions: string | null },
): T {
  if (row.group_id === null) return message;
  return {
    ...message,
    group: { id: row.group_id, subject: row.group_subject },
    mentions: row.mentions === null ? [] : (JSON.parse(row.mentions) as string[]),
  };
}

/** The group of each of the messages that belongs to one. */
export async function findMessageGroups(db: Executor, messageIds: readonly string[]): Promise<Map<string, MessageGroup>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('message_groups')
    .select(['message_id', 'group_id', 'group_subject'])
    .where('message_id', 'in', messageIds)
    .execute();
  return new Map(rows.map((row) => [row.message_id, { id: row.group_id, subject: row.group_subject }]));
}

const REMEMBER_BATCH = 500;

/**
 * Remembers groups as `number` sees them now. With `allGroupIds`, the number is in those groups
 * alone, and any other it was in is marked left.
 */
export async function rememberGroups(
  db: Executor,
  number: WhatsAppNumber,
  groups: readonly Group[],
  at: Date,
  allGroupIds?: readonly string[],
): Promise<void> {
  const rows = groups.map((group) => {
    const role = roleOf(group, number.phone);
    return {
      number_id: number.id,
      account_id: number.accountId,
      group_id: group.id,
      subject: group.subject,
      size: group.participants.length,
      is_admin: role === 'admin' || role === 'superadmin' ? 1 : 0,
      is_member: role === undefined ? 0 : 1,
      updated_at: at.getTime(),
    };
  });
  // One statement per batch rather than per group: a number first listed in hundreds of groups
  // writes them in a few round trips. The batch keeps the parameters under SQLite's limit.
  for (let start = 0; start < rows.length; start += REMEMBER_BATCH) {
    await db
      .insertInto('number_groups')
      .values(rows.slice(start, start + REMEMBER_BATCH))
      .onConflict((conflict) =>
        conflict.columns(['number_id', 'group_id']).doUpdateSet((update) => ({
          subject: update.ref('excluded.subject'),
          size: update.ref('excluded.size'),
          is_admin: update.ref('excluded.is_admin'),
          is_member: update.ref('excluded.is_member'),
          updated_at: update.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
  if (allGroupIds !== undefined) {
    let query = db
      .updateTable('number_groups')
      .set({ is_member: 0, is_admin: 0, updated_at: at.getTime() })
      .where('number_id', '=', number.id)
      .where('is_member', '=', 1);
    if (allGroupIds.length > 0) query = query.where('group_id', 'not in', allGroupIds);
    await query.execute();
  }
}

/**
 * Notes a change the number heard of in a group it knows: a new subject, the number's own role
 * changing, the number being added (a group it did not know yet is remembered with what the
 * change says), and the size as participants come and go.
 */
export async function noteGroupChange(db: Executor, number: WhatsAppNumber, change: GroupChange, aboutNumber: boolean): Promise<void> {
  const at = change.at.getTime();
  const joined = change.kind === 'added' || change.kind === 'joined';
  if (aboutNumber && joined) {
    const values = { is_member: 1, is_admin: 0, updated_at: at, ...(change.subject !== undefined && { subject: change.subject }) };
    await db
      .insertInto('number_groups')
      .values({
        number_id: number.id,
        account_id: number.accountId,
        group_id: change.groupId,
        subject: change.subject ?? '',
        size: 0,
        ...values,
      })
      .onConflict((conflict) => conflict.columns(['number_id', 'group_id']).doUpdateSet(values))
      .execute();
    return;
  }
  const count = change.participants.length;
  const set =
    change.kind === 'subject' && change.subject !== undefined
      ? { subject: change.subject }
      : aboutNumber && (change.kind === 'promoted' || change.kind === 'demoted')
        ? { is_admin: change.kind === 'promoted' ? 1 : 0 }
        : joined
          ? { size: sql<number>`size + ${count}` }
          : change.kind === 'removed' || change.kind === 'left'
            ? { size: sql<number>`case when size > ${count} then size - ${count} else 0 end` }
            : undefined;
  if (set === undefined) return;
  await db
    .updateTable('number_groups')
    .set({ ...set, updated_at: at })
    .where('number_id', '=', number.id)
    .where('group_id', '=', change.groupId)
    .execute();
}

/** Notes that the number is no longer in the group (it left, or was removed). */
export async function forgetMembership(db: Executor, number: WhatsAppNumber, groupId: string, at: Date): Promise<void> {
  await db
    .updateTable('number_groups')
    .set({ is_member: 0, is_admin: 0, updated_at: at.getTime() })
    .where('number_id', '=', number.id)
    .where('group_id', '=', groupId)
    .execute();
}

/** Whether any number of the account is or was in the group: only then may the account learn that it exists. */
export async function accountKnowsGroup(db: Executor, accountId: string, groupId: string): Promise<boolean> {
  const row = await db
    .selectFrom('number_groups')
    .select('group_id')
    .where('account_id', '=', accountId)
    .where('group_id', '=', groupId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The groups each of the numbers is in, as it last saw them, by subject. */
export async function listKnownGroups(db: Executor, numberIds: readonly string[]): Promise<(KnownGroup & { numberId: string })[]> {
  if (numberIds.length === 0) return [];
  const rows = await db
    .selectFrom('number_groups')
    .selectAll()
    .where('number_id', 'in', numberIds)
    .where('is_member', '=', 1)
    .orderBy('subject')
    .orderBy('group_id')
    .execute();
  return rows.map((row) => ({
    numberId: row.number_id,
    groupId: row.group_id,
    subject: row.subject,
    size: row.size,
    isAdmin: row.is_admin === 1,
    isMember: row.is_member === 1,
    updatedAt: new Date(Number(row.updated_at)),
  }));
}

/** The subject the number last saw the group under, if it knows the group. */
export async function knownSubject(db: Executor, numberId: string, groupId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('number_groups')
    .select('subject')
    .where('number_id', '=', numberId)
    .where('group_id', '=', groupId)
    .executeTakeFirst();
  return row?.subject;
}
