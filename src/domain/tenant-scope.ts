/**
 * Whose data a call may read or change, as a value rather than an optional argument. An
 * account scope is made from an API key or a dashboard session of that account; the operator
 * scope only from an operator's sign-in or the CLI. Services and repositories that read tenant
 * data require one, so a forgotten argument is a compile error instead of a query across every
 * account (docs/adr/0017-tenant-scope.md).
 *
 * The brand is a module-private symbol: a scope cannot be written as an object literal, only
 * minted by the functions below, and test/domain/tenant-scope.test.ts holds the short list of
 * files allowed to call them.
 */
declare const minted: unique symbol;

export interface AccountScope {
  readonly kind: 'account';
  readonly accountId: string;
  readonly [minted]: true;
}

export interface OperatorScope {
  readonly kind: 'operator';
  readonly [minted]: true;
}

export type TenantScope = AccountScope | OperatorScope;

/** The scope of one account. Only authentication (API key, dashboard session) calls this. */
export function accountScope(accountId: string): AccountScope {
  return Object.freeze({ kind: 'account', accountId }) as AccountScope;
}

/** Every account. Only operator sign-in and the CLI call this. */
export function operatorScope(): OperatorScope {
  return Object.freeze({ kind: 'operator' }) as OperatorScope;
}

/**
 * The operator, acting inside one account (the CLI's `--account`, the console's account page):
 * an account scope, since the operator may act in any account. Needs the operator scope in hand.
 */
export function withinAccount(_operator: OperatorScope, accountId: string): AccountScope {
  return accountScope(accountId);
}

/** Whether the scope may see an object of this account. */
export function scopeCovers(scope: TenantScope, accountId: string): boolean {
  return scope.kind === 'operator' || scope.accountId === accountId;
}

/** The account a repository filters on, or undefined for the operator, who sees them all. */
export function scopedAccountId(scope: TenantScope): string | undefined {
  return scope.kind === 'account' ? scope.accountId : undefined;
}
