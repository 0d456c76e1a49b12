// Table shapes of accounts: their users, sign-ins and invites, their API keys and monthly usage,
// the operator's tokens and the audit log, as both dialects store them; see schema.ts.
import type { ColumnType, Generated, Selectable } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string;
  plan: string;
  custom_monthly_limit: number | null;
  /** The account's default send policy; null inherits the gateway's (migration 0018). */
  send_policy: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  link_previews: Generated<number>;
}

export interface UsersTable {
  id: string;
  account_id: string | null;
  /** Stored lower-cased, which is what makes the unique index case-insensitive. */
  email: string;
  password_hash: string;
  role: string;
  is_operator: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  hint: string;
  created_by_user_id: string | null;
  /** The creator's email when the key was made; kept after the creator is removed. */
  created_by_email: ColumnType<string | null, string | null | undefined, string | null>;
  /** The key's scopes, comma-separated; keys made before scopes have 'read,send'. */
  scopes: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface MonthlyUsageTable {
  account_id: string;
  /** "YYYY-MM" in UTC. */
  period: string;
  used: number;
}

export interface DashboardSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  created_at: number;
  last_seen_at: number;
  ip: string | null;
  user_agent: string | null;
}

export interface SignInFailuresTable {
  /** A keyed digest of what is counted (an address, an email, or both): never the email itself. */
  throttle_key: string;
  failures: number;
  window_started_at: number;
  blocked_until: ColumnType<number, number | undefined, number>;
  previous_blocked_until: ColumnType<number, number | undefined, number>;
}

export interface UserInvitesTable {
  id: string;
  account_id: string;
  token_hash: string;
  role: string;
  created_by_user_id: string | null;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  accepted_user_id: string | null;
}

/** Bearer tokens of the operator API, stored as their SHA-256 (migration 0031, docs/adr/0057-operator-api.md). */
export interface OperatorTokensTable {
  id: string;
  name: string;
  token_hash: string;
  hint: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** The audit log of management actions (migration 0030, docs/adr/0053-audit-log.md). */
export interface AuditEventsTable {
  id: string;
  at: number;
  account_id: string | null;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string | null;
  source_address: string | null;
  action: string;
  target_id: string | null;
  /** A small JSON object of facts, never a secret. */
  details: string | null;
}

export type AccountRow = Selectable<AccountsTable>;
export type UserRow = Selectable<UsersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type UserInviteRow = Selectable<UserInvitesTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;
