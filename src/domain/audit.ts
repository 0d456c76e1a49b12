/**
 * The audit log's vocabulary (docs/adr/0053-audit-log.md): who acted, through what, from where,
 * and what they did. Every management action, through the dashboard, the API or the CLI, writes
 * one row in the same transaction as its change, so there is no change without its row.
 */

/** How the actor reached the gateway. */
export type AuditActorKind = 'user' | 'api_key' | 'operator_token' | 'cli' | 'system';

export interface AuditActor {
  kind: AuditActorKind;
  /** The user's or the key's id; null for the CLI and the gateway itself. */
  id: string | null;
  /** What a person reads: the user's email, the key's name and hint. */
  label: string | null;
  /** The client's address as the HTTP layer saw it (after WAGW_TRUST_PROXY); null off HTTP. */
  address: string | null;
}

/** The operator at the machine, through `wagw`. */
export const CLI_ACTOR: AuditActor = Object.freeze({ kind: 'cli', id: null, label: 'wagw (CLI)', address: null });

/**
 * The gateway's own code acting without a person behind it: tests and benchmarks that call a
 * service directly. Every entry point a person reaches (dashboard, API, CLI) names its actor.
 */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({ kind: 'system', id: null, label: null, address: null });

const auditActions = [
  'account.created',
  'account.updated',
  'account.settings_changed',
  'api_key.created',
  'api_key.revoked',
  'operator_token.created',
  'operator_token.revoked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_revealed',
  'webhook.secret_rotated',
  'webhook.test_sent',
  'webhook.delivery_redelivered',
  'invite.created',
  'invite.revoked',
  'user.created',
  'user.role_changed',
  'user.password_reset',
  'user.operator_changed',
  'user.removed',
  'number.added',
  'number.settings_changed',
  'number.status_simulated',
  'number.reassigned',
  'number.removed',
  'number.link_started',
  'number.link_cancelled',
  'number.restarted',
  'number.logged_out',
  'number.paused',
  'number.resumed',
  'number.queue_cleared',
  'number.proxy_set',
  'number.proxy_cleared',
  'number.cloud_settings_set',
  'number.cloud_settings_cleared',
  'number.send_policy_changed',
  'account.send_policy_changed',
  'message.replied',
] as const;
export type AuditAction = (typeof auditActions)[number];

/** Small facts about an action: what changed, never a secret. */
export type AuditDetails = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

export interface AuditEvent {
  id: string;
  at: Date;
  /** The account acted in; null for an action on the gateway as a whole. */
  accountId: string | null;
  actor: AuditActor;
  action: AuditAction;
  /** The object acted on: a webhook, key or delivery id. */
  targetId: string | null;
  details: AuditDetails | null;
}

/**
 * Which rows an operator's read of the audit log returns. `accountId` narrows the read to one
 * account's rows: it is a filter the operator chooses within the operator scope, never a tenant
 * scope, so it grants nothing and is no substitute for an AccountScope. It is required, null
 * meaning every account, so that a read across accounts is always a choice someone wrote down.
 */
export interface AuditFilter {
  /** One account's rows; null for every account's and the gateway's own. */
  accountId: string | null;
  /** How many, newest first. */
  limit?: number;
}
