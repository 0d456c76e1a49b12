import type { AuditAction, AuditActorKind, AuditDetails, AuditEvent, AuditFilter } from '../../domain/audit.ts';
import type { Executor } from '../database.ts';
import type { AuditEventRow } from '../schema-accounts.ts';

function toAuditEvent(row: AuditEventRow): AuditEvent {
  return {
    id: row.id,
    at: new Date(Number(row.at)),
    accountId: row.account_id,
    actor: { kind: row.actor_kind as AuditActorKind, id: row.actor_id, label: row.actor_label, address: row.source_address },
    action: row.action as AuditAction,
    targetId: row.target_id,
    details: row.details === null ? null : (JSON.parse(row.details) as AuditDetails),
  };
}

/** Adds a row; called in the transaction of the change it records, so neither is kept without the other. */
export async function insertAuditEvent(db: Executor, event: AuditEvent): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: event.id,
      at: event.at.getTime(),
      account_id: event.accountId,
      actor_kind: event.actor.kind,
      actor_id: event.actor.id,
      actor_label: event.actor.label,
      source_address: event.actor.address,
      action: event.action,
      target_id: event.targetId,
      details: event.details === null ? null : JSON.stringify(event.details),
    })
    .execute();
}

/** The newest rows first, as many as the filter's limit (the caller bounds it). */
export async function listAuditEvents(db: Executor, filter: AuditFilter & { limit: number }): Promise<AuditEvent[]> {
  let query = db.selectFrom('audit_events').selectAll();
  if (filter.accountId !== null) query = query.where('account_id', '=', filter.accountId);
  const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  return rows.map(toAuditEvent);
}
