// The send policies stored on numbers and accounts (migration 0018), which the governor reads.
import type { Executor } from '../database.ts';

export async function setNumberSendPolicy(db: Executor, numberId: string, stored: string | null): Promise<void> {
  await db.updateTable('whatsapp_numbers').set({ send_policy: stored }).where('id', '=', numberId).execute();
}

export async function setAccountSendPolicy(db: Executor, accountId: string, stored: string | null): Promise<void> {
  await db.updateTable('accounts').set({ send_policy: stored }).where('id', '=', accountId).execute();
}

export async function findSendPolicies(
  db: Executor,
  numberId: string,
): Promise<{ number: string | null; account: string | null } | undefined> {
  const row = await db
    .selectFrom('whatsapp_numbers')
    .innerJoin('accounts', 'accounts.id', 'whatsapp_numbers.account_id')
    .select(['whatsapp_numbers.send_policy as number', 'accounts.send_policy as account'])
    .where('whatsapp_numbers.id', '=', numberId)
    .executeTakeFirst();
  return row;
}

/** Ids per statement when many numbers are read at once. */
const IDS_PER_STATEMENT = 500;

/** The stored settings of many numbers and their accounts, in one statement per 500 numbers. */
export async function findSendPoliciesOf(
  db: Executor,
  numberIds: readonly string[],
): Promise<Map<string, { number: string | null; account: string | null }>> {
  const settings = new Map<string, { number: string | null; account: string | null }>();
  for (let start = 0; start < numberIds.length; start += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('whatsapp_numbers')
      .innerJoin('accounts', 'accounts.id', 'whatsapp_numbers.account_id')
      .select(['whatsapp_numbers.id', 'whatsapp_numbers.send_policy as number', 'accounts.send_policy as account'])
      .where('whatsapp_numbers.id', 'in', numberIds.slice(start, start + IDS_PER_STATEMENT))
      .execute();
    for (const row of rows) settings.set(row.id, { number: row.number, account: row.account });
  }
  return settings;
}

export async function findAccountSendPolicy(db: Executor, accountId: string): Promise<string | null> {
  const row = await db.selectFrom('accounts').select('send_policy').where('id', '=', accountId).executeTakeFirst();
  return row?.send_policy ?? null;
}
