import type { AuditEvent } from '../../domain/audit.ts';
import type { OperatorScope } from '../../domain/tenant-scope.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'audit'>;

/** One row of the audit page: who, through what, from where, did what to which object, and when. */
interface AuditRowView {
  at: Date;
  account: { id: string; name: string } | null;
  actor: string;
  via: string;
  address: string;
  action: string;
  target: string;
  details: string;
}

export interface OperatorAuditView {
  rows: AuditRowView[];
  /** The account the page is narrowed to; null for every account. */
  accountId: string | null;
  accounts: Array<{ id: string; name: string }>;
}

const VIA: Readonly<Record<AuditEvent['actor']['kind'], string>> = {
  user: 'dashboard',
  api_key: 'API key',
  operator_token: 'operator token',
  cli: 'CLI',
  system: 'gateway',
};

export async function presentOperatorAudit(
  gateway: Services,
  operator: OperatorScope,
  /** One account's rows, or null for every account's. */
  accountId: string | null,
): Promise<OperatorAuditView> {
  const [events, accounts] = await Promise.all([gateway.audit.list(operator, { accountId, limit: 200 }), gateway.accounts.listAccounts()]);
  const names = new Map(accounts.map((account) => [account.id, account.name]));
  return {
    accountId,
    accounts: accounts.map((account) => ({ id: account.id, name: account.name })),
    rows: events.map((event) => ({
      at: event.at,
      account: event.accountId === null ? null : { id: event.accountId, name: names.get(event.accountId) ?? event.accountId },
      actor: event.actor.label ?? event.actor.id ?? '—',
      via: VIA[event.actor.kind],
      address: event.actor.address ?? '—',
      action: event.action,
      target: event.targetId ?? '—',
      details: event.details === null ? '' : JSON.stringify(event.details),
    })),
  };
}
