import type { GroupRole, SandboxGroupRecord } from '../../domain/groups.ts';
import type { Executor } from '../database.ts';

// The embedded sandbox network's groups, kept whole between runs (migration 0017, ADR 0024).

export async function listSandboxGroups(db: Executor): Promise<SandboxGroupRecord[]> {
  const rows = await db.selectFrom('sandbox_groups').selectAll().orderBy('group_id').execute();
  return rows.map((row) => ({
    id: row.group_id,
    subject: row.subject,
    description: row.description,
    inviteCode: row.invite_code,
    members: JSON.parse(row.members) as [string, GroupRole][],
  }));
}

export async function saveSandboxGroup(db: Executor, record: SandboxGroupRecord, at: Date): Promise<void> {
  const values = {
    subject: record.subject,
    description: record.description,
    invite_code: record.inviteCode,
    members: JSON.stringify(record.members),
    updated_at: at.getTime(),
  };
  await db
    .insertInto('sandbox_groups')
    .values({ group_id: record.id, ...values })
    .onConflict((conflict) => conflict.column('group_id').doUpdateSet(values))
    .execute();
}

export async function deleteSandboxGroup(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('sandbox_groups').where('group_id', '=', id).execute();
}
