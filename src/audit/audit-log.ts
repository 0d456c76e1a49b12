import type { AuditEvent, AuditFilter } from '../domain/audit.ts';
import type { OperatorScope } from '../domain/tenant-scope.ts';
import type { Store } from '../store/database.ts';
import { listAuditEvents } from '../store/repositories/audit-events.ts';

/** The most rows one read returns: the console shows a page, not the whole history. */
const MAX_AUDIT_PAGE = 500;

/**
 * Reading the audit log: the operator's, across accounts or for one. The rows are written by the
 * services that make the changes (audit-trail.ts), never through here.
 */
export class AuditLog {
  constructor(private readonly store: Store) {}

  list(_operator: OperatorScope, filter: AuditFilter): Promise<AuditEvent[]> {
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), MAX_AUDIT_PAGE);
    return listAuditEvents(this.store.db, { accountId: filter.accountId, limit });
  }
}
