import type { AuditAction, AuditActor, AuditDetails, AuditEvent } from '../domain/audit.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import { newId } from '../domain/ids.ts';
import type { Executor } from '../store/database.ts';
import { insertAuditEvent } from '../store/repositories/audit-events.ts';

export interface AuditFacts {
  accountId: string | null;
  targetId: string | null;
  details?: AuditDetails;
}

/**
 * Writes an action's audit row through `db`, which the caller passes as the transaction of the
 * change itself: a change that commits has its row, and one that rolls back leaves none.
 */
export async function recordAudit(db: Executor, actor: AuditActor, action: AuditAction, facts: AuditFacts): Promise<AuditEvent> {
  const event: AuditEvent = {
    id: newId('auditEvent'),
    at: new Date(),
    accountId: facts.accountId,
    actor,
    action,
    targetId: facts.targetId,
    details: facts.details ?? null,
  };
  await insertAuditEvent(db, event);
  return event;
}

/** A number's audit row: its account, the number as the target, and its phone beside `details`. */
export function recordNumberAudit(
  db: Executor,
  actor: AuditActor,
  action: AuditAction,
  number: Pick<WhatsAppNumber, 'id' | 'accountId' | 'phone'>,
  details?: AuditDetails,
): Promise<AuditEvent> {
  return recordAudit(db, actor, action, { accountId: number.accountId, targetId: number.id, details: { phone: number.phone, ...details } });
}
