import type { Account } from '../domain/model.ts';
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
