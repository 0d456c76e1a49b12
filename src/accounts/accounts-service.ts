import { recordAudit } from '../audit/audit-trail.ts';
import { SYSTEM_ACTOR, type AuditActor } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Account, User, UserRole } from '../domain/model.ts';
import { userRoles } from '../domain/model.ts';
import { effectiveMonthlyLimit, isPlanName, planNames, type PlanName, usagePeriod, usagePeriodResetAt } from '../domain/plans.ts';
import { isUniqueViolation } from '../store/constraint-errors.ts';
import type { Executor, Store } from '../store/database.ts';
import {
  findAccountById,
  findAccountSettings,
  insertAccount,
  listAccounts,
  updateAccount,
  updateAccountSettings,
  type AccountSettings,
} from '../store/repositories/accounts.ts';
import { countOperators, findUserById, insertUser, listUsers } from '../store/repositories/users.ts';
import { monthlyUsed } from '../store/repositories/usage.ts';
import { generatePassword, PasswordHasher } from './passwords.ts';
import type { AccountScope, TenantScope } from '../domain/tenant-scope.ts';
import { assertAcceptablePassword } from './password-policy.ts';

export interface CreateAccountInput {
  name: string;
  plan?: string;
  customMonthlyLimit?: number | null;
}

export interface CreateUserInput {
  email: string;
  /** The account the user belongs to; null only for an operator, who may belong to none. */
  accountId: string | null;
  role?: string;
  isOperator?: boolean;
  password?: string;
}

export interface PreparedUser {
  user: User;
  passwordHash: string;
  generatedPassword?: string;
}

export interface CreatedUser {
  user: User;
  /** Set only when the gateway generated the password; it is shown once. */
  generatedPassword?: string;
}

export interface AccountUsage {
  plan: PlanName;
  used: number;
  limit: number | null;
  resetsAt: Date;
}

export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Accounts and their users: what the operator manages. */
export class AccountsService {
  constructor(
    private readonly store: Store,
    private readonly passwords = new PasswordHasher(),
  ) {}

  /** Makes an account, with its audit row (docs/adr/0053-audit-log.md); SYSTEM_ACTOR only for code with no person behind it. */
  async createAccount(input: CreateAccountInput, actor: AuditActor = SYSTEM_ACTOR): Promise<Account> {
    const name = input.name.trim();
    if (name === '') throw new AppError('invalid_argument', 'An account needs a name.');
    const account: Account = {
      id: newId('account'),
      name,
      plan: parsePlan(input.plan ?? 'starter'),
      customMonthlyLimit: parseMonthlyLimit(input.customMonthlyLimit ?? null),
      createdAt: new Date(),
    };
    await this.store.db.transaction().execute(async (trx) => {
      await insertAccount(trx, account);
      await recordAudit(trx, actor, 'account.created', {
        accountId: account.id,
        targetId: account.id,
        details: { name: account.name, plan: account.plan, monthly_limit: account.customMonthlyLimit },
      });
    });
    return account;
  }

  listAccounts(): Promise<Account[]> {
    return listAccounts(this.store.db);
  }

  async getAccount(id: string): Promise<Account> {
    const account = await findAccountById(this.store.db, id);
    if (account === undefined) throw new AppError('account_not_found', `There is no account ${id}.`);
    return account;
  }

  async updateAccount(
    id: string,
    changes: { plan?: string; customMonthlyLimit?: number | null },
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Account> {
    await this.getAccount(id);
    const parsed = {
      ...(changes.plan !== undefined && { plan: parsePlan(changes.plan) }),
      ...(changes.customMonthlyLimit !== undefined && { customMonthlyLimit: parseMonthlyLimit(changes.customMonthlyLimit) }),
    };
    const updated = await this.store.db.transaction().execute(async (trx) => {
      const row = await updateAccount(trx, id, parsed);
      await recordAudit(trx, actor, 'account.updated', {
        accountId: id,
        targetId: id,
        details: {
          ...(parsed.plan !== undefined && { plan: parsed.plan }),
          ...(parsed.customMonthlyLimit !== undefined && { monthly_limit: parsed.customMonthlyLimit }),
        },
      });
      return row;
    });
    // Sends read the plan with the number (store/cached-lookups.ts).
    await this.store.lookups.numbersChanged();
    return updated!;
  }

  /** The account's own settings (PATCH /account/settings); link previews are off until turned on. */
  async settings(scope: AccountScope): Promise<AccountSettings> {
    const settings = await findAccountSettings(this.store.db, scope.accountId);
    if (settings === undefined) throw new AppError('account_not_found', `There is no account ${scope.accountId}.`);
    return settings;
  }

  /** Changes what is given, with its audit row naming `actor`; nothing given is only a read, and no row. */
  async updateSettings(scope: AccountScope, changes: Partial<AccountSettings>, actor: AuditActor): Promise<AccountSettings> {
    const { linkPreviews } = changes;
    if (linkPreviews === undefined) return this.settings(scope);
    await this.store.db.transaction().execute(async (trx) => {
      await updateAccountSettings(trx, scope.accountId, { linkPreviews });
      await recordAudit(trx, actor, 'account.settings_changed', {
        accountId: scope.accountId,
        targetId: scope.accountId,
        details: { link_previews: linkPreviews },
      });
    });
    return this.settings(scope);
  }

  async usage(accountId: string, at = new Date()): Promise<AccountUsage> {
    const account = await this.getAccount(accountId);
    return {
      plan: account.plan,
      used: await monthlyUsed(this.store.db, accountId, usagePeriod(at)),
      limit: effectiveMonthlyLimit(account.plan, account.customMonthlyLimit),
      resetsAt: usagePeriodResetAt(at),
    };
  }

  /** Makes a user, with its audit row (never the password); SYSTEM_ACTOR only for code with no person behind it. */
  async createUser(input: CreateUserInput, actor: AuditActor = SYSTEM_ACTOR): Promise<CreatedUser> {
    const prepared = await this.prepareUser(input);
    const { user } = prepared;
    await this.store.db.transaction().execute(async (trx) => {
      await this.insertPreparedUser(trx, prepared);
      await recordAudit(trx, actor, 'user.created', {
        accountId: user.accountId,
        targetId: user.id,
        details: { email: user.email, role: user.role, is_operator: user.isOperator },
      });
    });
    return prepared.generatedPassword === undefined
      ? { user: prepared.user }
      : { user: prepared.user, generatedPassword: prepared.generatedPassword };
  }

  /**
   * Checks a new user and hashes the password, without writing. Split from the insert so that a
   * caller can insert inside its own transaction without holding it through the slow hash.
   */
  async prepareUser(input: CreateUserInput): Promise<PreparedUser> {
    const email = normalizeEmail(input.email);
    const isOperator = input.isOperator ?? false;
    if (input.accountId === null && !isOperator) {
      throw new AppError('invalid_argument', 'A user needs an account, unless the user is an operator.');
    }
    if (input.accountId !== null) await this.getAccount(input.accountId);
    const role = input.role ?? (input.accountId === null ? 'admin' : 'member');
    if (!(userRoles as readonly string[]).includes(role)) {
      throw new AppError('invalid_argument', `Role must be one of ${userRoles.join(', ')}; got "${role}".`);
    }
    if (input.password !== undefined) await assertAcceptablePassword(input.password, [email]);
    const password = input.password ?? generatePassword();
    const user: User = { id: newId('user'), accountId: input.accountId, email, role: role as UserRole, isOperator, createdAt: new Date() };
    return {
      user,
      passwordHash: await this.passwords.hash(password),
      ...(input.password === undefined && { generatedPassword: password }),
    };
  }

  async insertPreparedUser(db: Executor, prepared: PreparedUser): Promise<void> {
    try {
      await insertUser(db, prepared.user, prepared.passwordHash);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError('email_already_registered', `A user with email ${prepared.user.email} already exists.`);
      throw error;
    }
  }

  async getUser(id: string): Promise<User> {
    const user = await findUserById(this.store.db, id);
    if (user === undefined) throw new AppError('user_not_found', `There is no user ${id}.`);
    return user;
  }

  listUsers(scope: TenantScope): Promise<User[]> {
    return listUsers(this.store.db, scope);
  }

  /**
   * Creates the first operator on first start, so that a fresh gateway can be signed into.
   * Returns the created user, or undefined when an operator already exists. Nodes started
   * together on an empty database all find no operator; the email's unique index lets one
   * insert win, and the others, finding that operator, start as if it had always been there.
   */
  async ensureOperator(email: string | undefined, password: string | undefined): Promise<CreatedUser | undefined> {
    if ((await countOperators(this.store.db)) > 0) return undefined;
    try {
      return await this.createUser({
        email: email ?? 'admin@wagw.local',
        accountId: null,
        isOperator: true,
        role: 'admin',
        ...(password !== undefined && { password }),
      });
    } catch (error) {
      if (error instanceof AppError && error.code === 'email_already_registered' && (await countOperators(this.store.db)) > 0)
        return undefined;
      // At first start the password comes from the environment, so the refusal names where.
      if (error instanceof AppError && error.code === 'weak_password')
        throw new AppError('weak_password', `WAGW_ADMIN_PASSWORD: ${error.message}`, error.meta);
      throw error;
    }
  }
}

function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (!EMAIL_PATTERN.test(email)) throw new AppError('invalid_argument', `"${raw}" is not an email address.`);
  return email;
}

function parsePlan(plan: string): PlanName {
  if (!isPlanName(plan)) throw new AppError('invalid_argument', `Plan must be one of ${planNames.join(', ')}; got "${plan}".`);
  return plan;
}

function parseMonthlyLimit(limit: number | null): number | null {
  if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new AppError('invalid_argument', `A monthly limit must be a whole number of at least 0; got ${limit}.`);
  }
  return limit;
}
