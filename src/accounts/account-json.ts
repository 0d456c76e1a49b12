import type { Account, ApiKey } from '../domain/model.ts';
import { effectiveMonthlyLimit } from '../domain/plans.ts';

/** An account as the CLI's --json and the operator API show it: the same fields, in snake_case. */
export function accountJson(account: Account) {
  return {
    id: account.id,
    name: account.name,
    plan: account.plan,
    monthly_limit: account.customMonthlyLimit,
    effective_monthly_limit: effectiveMonthlyLimit(account.plan, account.customMonthlyLimit),
    created_at: account.createdAt.toISOString(),
  };
}

/** An API key as the CLI's --json and the operator API show it: never its secret, which is not stored. */
export function apiKeyJson(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    hint: key.hint,
    scopes: key.scopes,
    account_id: key.accountId,
    created_by_user_id: key.createdByUserId,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}
