import type { Account } from '../../domain/model.ts';
import type { PlanName } from '../../domain/plans.ts';
import type { Executor } from '../database.ts';
import type { AccountRow } from '../schema-accounts.ts';

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan as PlanName,
    customMonthlyLimit: row.custom_monthly_limit,
    createdAt: new Date(row.created_at),
  };
}

export async function insertAccount(db: Executor, account: Account): Promise<void> {
  await db
    .insertInto('accounts')
    .values({
      id: account.id,
      name: account.name,
      plan: account.plan,
      custom_monthly_limit: account.customMonthlyLimit,
      created_at: account.createdAt.getTime(),
    })
    .execute();
}

export async function findAccountById(db: Executor, id: string): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toAccount(row);
}

export async function listAccounts(db: Executor): Promise<Account[]> {
  const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toAccount);
}

export interface AccountChanges {
  name?: string;
  plan?: PlanName;
  customMonthlyLimit?: number | null;
}

export async function updateAccount(db: Executor, id: string, changes: AccountChanges): Promise<Account | undefined> {
  const values: Partial<AccountRow> = {};
  if (changes.name !== undefined) values.name = changes.name;
  if (changes.plan !== undefined) values.plan = changes.plan;
  if (changes.customMonthlyLimit !== undefined) values.custom_monthly_limit = changes.customMonthlyLimit;
  if (Object.keys(values).length > 0) {
    await db.updateTable('accounts').set(values).where('id', '=', id).execute();
  }
  return findAccountById(db, id);
}

/**
 * Holds the account's row until the transaction ends, so that checks of "how many does this
 * account have" followed by an insert cannot interleave (two webhook creations at the cap).
 * SQLite runs one write transaction at a time already; PostgreSQL locks the row.
 */
export async function lockAccount(trx: Executor, dialect: 'sqlite' | 'postgres', accountId: string): Promise<void> {
  if (dialect === 'postgres') await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

/** What an account has chosen for its messages: whether the gateway fetches link previews. */
export interface AccountSettings {
  linkPreviews: boolean;
}

export async function findAccountSettings(db: Executor, id: string): Promise<AccountSettings | undefined> {
  const row = await db.selectFrom('accounts').select('link_previews').where('id', '=', id).executeTakeFirst();
  return row && { linkPreviews: row.link_previews === 1 };
}

export async function updateAccountSettings(db: Executor, id: string, changes: Partial<AccountSettings>): Promise<void> {
  if (changes.linkPreviews === undefined) return;
  await db
    .updateTable('accounts')
    .set({ link_previews: changes.linkPreviews ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}
