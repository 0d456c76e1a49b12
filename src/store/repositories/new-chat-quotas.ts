import type { NewChatQuota, NewChatQuotaState } from '../../domain/new-chat-quota.ts';
import type { Executor } from '../database.ts';
import type { NewChatQuotasTable } from '../schema-numbers.ts';

const STATUSES: readonly string[] = ['none', 'first_warning', 'second_warning', 'capped', 'unknown'];

const dateOf = (millis: number | string | null): Date | null => (millis === null ? null : new Date(Number(millis)));

function toState(row: NewChatQuotasTable): NewChatQuotaState {
  return {
    // A status this version does not know (written by a newer one) is shown as unknown.
    status: STATUSES.includes(row.status) ? (row.status as NewChatQuota['status']) : 'unknown',
    total: row.total === null ? null : Number(row.total),
    used: row.used === null ? null : Number(row.used),
    cycleStartedAt: dateOf(row.cycle_started_at),
    cycleEndsAt: dateOf(row.cycle_ends_at),
    error: row.error,
    source: row.source === 'whatsapp' ? 'whatsapp' : 'fallback',
    readAt: new Date(Number(row.read_at)),
    cappedUntil: dateOf(row.capped_until),
  };
}

export async function findNewChatQuota(db: Executor, numberId: string): Promise<NewChatQuotaState | undefined> {
  const row = await db.selectFrom('new_chat_quotas').selectAll().where('number_id', '=', numberId).executeTakeFirst();
  return row && toState(row);
}

export async function saveNewChatQuota(db: Executor, numberId: string, state: NewChatQuotaState): Promise<void> {
  const values = {
    status: state.status,
    total: state.total,
    used: state.used,
    cycle_started_at: state.cycleStartedAt?.getTime() ?? null,
    cycle_ends_at: state.cycleEndsAt?.getTime() ?? null,
    source: state.source,
    error: state.error,
    read_at: state.readAt.getTime(),
    capped_until: state.cappedUntil?.getTime() ?? null,
  };
  await db
    .insertInto('new_chat_quotas')
    .values({ number_id: numberId, ...values })
    .onConflict((conflict) => conflict.column('number_id').doUpdateSet(values))
    .execute();
}

/** Every number's stored quota, for the metrics' scrape: one row per number whose quota was ever read. */
export async function listNewChatQuotas(db: Executor): Promise<{ numberId: string; state: NewChatQuotaState }[]> {
  const rows = await db.selectFrom('new_chat_quotas').selectAll().orderBy('number_id').execute();
  return rows.map((row) => ({ numberId: row.number_id, state: toState(row) }));
}
