import type { Account, ApiKey, User, WhatsAppNumber } from '../domain/model.ts';
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

/** A user as the CLI's --json and the operator API show it: never a password or its hash. */
export function userJson(user: User) {
  return {
    id: user.id,
    email: user.email,
    account_id: user.accountId,
    role: user.role,
    is_operator: user.isOperator,
    created_at: user.createdAt.toISOString(),
  };
}

/** A number as the CLI's --json and the operator API show it, with its settings. */
export function numberJson(number: WhatsAppNumber) {
  return {
    id: number.id,
    phone: number.phone,
    engine: number.engine,
    status: number.status,
    account_id: number.accountId,
    holder_user_id: number.holderUserId,
    auto_read: number.autoRead,
    reject_calls: number.rejectCalls,
    call_reply_text: number.callReplyText,
    show_online: number.showOnline,
    proxy: number.proxy,
    created_at: number.createdAt.toISOString(),
  };
}
