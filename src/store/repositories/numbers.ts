import type { EngineKind, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import { compiledStatement } from '../compiled-statement.ts';
import type { Executor } from '../database.ts';
import type { NumberRow } from '../schema-numbers.ts';
import { scopedAccountId, type TenantScope } from '../../domain/tenant-scope.ts';

function toNumber(row: NumberRow): WhatsAppNumber {
  return {
    id: row.id,
    accountId: row.account_id,
    holderUserId: row.holder_user_id,
    phone: row.phone as E164,
    engine: row.engine as EngineKind,
    status: row.status as SessionStatus,
    statusReason: row.status_reason,
    autoRead: row.auto_read === 1,
    rejectCalls: row.reject_calls === 1,
    callReplyText: row.call_reply_text,
    showOnline: row.show_online === 1,
    proxy: row.proxy_redacted,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    // Null in a row a node older than migration 0055 wrote (a cluster upgraded node by node): its
    // status has held at least since the row last changed. Such a node's status writes also leave
    // the column at the earlier change until that node is upgraded too.
    statusChangedAt: new Date(Number(row.status_changed_at ?? row.updated_at)),
  };
}

export async function insertNumber(db: Executor, number: WhatsAppNumber): Promise<void> {
  await db
    .insertInto('whatsapp_numbers')
    .values({
      id: number.id,
      account_id: number.accountId,
      holder_user_id: number.holderUserId,
      phone: number.phone,
      engine: number.engine,
      status: number.status,
      status_reason: number.statusReason,
      auto_read: number.autoRead ? 1 : 0,
      reject_calls: number.rejectCalls ? 1 : 0,
      call_reply_text: number.callReplyText,
      show_online: number.showOnline ? 1 : 0,
      created_at: number.createdAt.getTime(),
      updated_at: number.updatedAt.getTime(),
      status_changed_at: number.statusChangedAt.getTime(),
    })
    .execute();
}

// Both run on every send and every incoming message, so they are compiled once. They name
// their columns rather than select *: a statement PostgreSQL has prepared fails once a
// migration adds a column to what * means, so a running gateway would break during an upgrade.
const NUMBER_COLUMNS = [
  'id',
  'account_id',
  'holder_user_id',
  'phone',
  'engine',
  'status',
  'status_reason',
  'auto_read',
  'reject_calls',
  'call_reply_text',
  'show_online',
  'proxy_redacted',
  'created_at',
  'updated_at',
  'status_changed_at',
] as const;

const selectNumberByPhone = compiledStatement((db, v: { phone: string }) =>
  db.selectFrom('whatsapp_numbers').select(NUMBER_COLUMNS).where('phone', '=', v.phone),
);

const selectNumberWithPlanByPhone = compiledStatement((db, v: { phone: string }) =>
  db
    .selectFrom('whatsapp_numbers')
    .innerJoin('accounts', 'accounts.id', 'whatsapp_numbers.account_id')
    .select(NUMBER_COLUMNS.map((column) => `whatsapp_numbers.${column}` as const))
    .select([
      'accounts.plan',
      'accounts.custom_monthly_limit',
      'whatsapp_numbers.send_policy as number_send_policy',
      'accounts.send_policy as account_send_policy',
    ])
    .where('whatsapp_numbers.phone', '=', v.phone),
);

export async function findNumberByPhone(db: Executor, phone: E164): Promise<WhatsAppNumber | undefined> {
  const row = (await selectNumberByPhone(db, { phone })).rows[0];
  return row && toNumber(row);
}

export async function findNumberById(db: Executor, id: string): Promise<WhatsAppNumber | undefined> {
  const row = await db.selectFrom('whatsapp_numbers').select(NUMBER_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && toNumber(row);
}

/** The numbers with these ids, in one statement per 500 ids. */
export async function findNumbersByIds(db: Executor, ids: readonly string[]): Promise<WhatsAppNumber[]> {
  const numbers: WhatsAppNumber[] = [];
  for (let start = 0; start < ids.length; start += 500) {
    const rows = await db
      .selectFrom('whatsapp_numbers')
      .select(NUMBER_COLUMNS)
      .where('id', 'in', ids.slice(start, start + 500))
      .execute();
    numbers.push(...rows.map(toNumber));
  }
  return numbers;
}

/** The numbers the scope may see: one account's, or all of them for the operator. */
export async function listNumbers(db: Executor, scope: TenantScope): Promise<WhatsAppNumber[]> {
  let query = db.selectFrom('whatsapp_numbers').select(NUMBER_COLUMNS).orderBy('created_at').orderBy('id');
  const accountId = scopedAccountId(scope);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  return (await query.execute()).map(toNumber);
}

export async function deleteNumber(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('whatsapp_numbers').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function updateNumberStatus(db: Executor, id: string, status: SessionStatus, reason: string | null, at: Date): Promise<void> {
  await db
    .updateTable('whatsapp_numbers')
    .set({ status, status_reason: reason, updated_at: at.getTime(), status_changed_at: at.getTime() })
    .where('id', '=', id)
    .execute();
}

export interface NumberWithPlan {
  number: WhatsAppNumber;
  plan: string;
  customMonthlyLimit: number | null;
  /** The send policies stored for the number and its account (null inherits); read with it, so a send costs no extra read. */
  sendPolicies: { number: string | null; account: string | null };
}

/** The send path's one read: the sending number together with its account's volume terms. */
export async function findNumberWithPlanByPhone(db: Executor, phone: E164): Promise<NumberWithPlan | undefined> {
  const row = (await selectNumberWithPlanByPhone(db, { phone })).rows[0];
  if (row === undefined) return undefined;
  const { plan, custom_monthly_limit, number_send_policy, account_send_policy, ...numberRow } = row;
  return {
    number: toNumber(numberRow),
    plan,
    customMonthlyLimit: custom_monthly_limit,
    sendPolicies: { number: number_send_policy, account: account_send_policy },
  };
}

/** The holder belonged to the old account, so it is cleared with the move. */
export async function reassignNumber(db: Executor, id: string, accountId: string, at: Date): Promise<void> {
  await db
    .updateTable('whatsapp_numbers')
    .set({ account_id: accountId, holder_user_id: null, updated_at: at.getTime() })
    .where('id', '=', id)
    .execute();
}

/** How many numbers each engine has in each session status, for the metrics scrape. */
export async function countNumbersByEngineAndStatus(db: Executor): Promise<{ engine: EngineKind; status: SessionStatus; count: number }[]> {
  const rows = await db
    .selectFrom('whatsapp_numbers')
    .select(['engine', 'status', (eb) => eb.fn.countAll<number | string>().as('count')])
    .groupBy(['engine', 'status'])
    .execute();
  return rows.map((row) => ({ engine: row.engine as EngineKind, status: row.status as SessionStatus, count: Number(row.count) }));
}

/** The settings a number's account changes (PATCH /numbers/{id}); the number must be the account's. */
export interface NumberSettings {
  autoRead?: boolean;
  rejectCalls?: boolean;
  callReplyText?: string | null;
  showOnline?: boolean;
  /** The user of the account who holds the number (the operator's to set); null for nobody. */
  holderUserId?: string | null;
}

/** Writes the settings given; those left out keep their value. */
export async function updateNumberSettings(db: Executor, accountId: string, numberId: string, settings: NumberSettings): Promise<void> {
  const { autoRead, rejectCalls, callReplyText, showOnline, holderUserId } = settings;
  const values = {
    ...(autoRead !== undefined && { auto_read: autoRead ? 1 : 0 }),
    ...(rejectCalls !== undefined && { reject_calls: rejectCalls ? 1 : 0 }),
    ...(callReplyText !== undefined && { call_reply_text: callReplyText }),
    ...(showOnline !== undefined && { show_online: showOnline ? 1 : 0 }),
    ...(holderUserId !== undefined && { holder_user_id: holderUserId }),
  };
  if (Object.keys(values).length === 0) return;
  await db.updateTable('whatsapp_numbers').set(values).where('id', '=', numberId).where('account_id', '=', accountId).execute();
}

/**
 * Sets or clears the number's proxy: the URL sealed (it may hold a password) and its redacted
 * form for display, both null to connect directly.
 */
export async function setNumberProxy(
  db: Executor,
  numberId: string,
  proxy: { sealed: string; redacted: string } | null,
  at: Date,
): Promise<void> {
  await db
    .updateTable('whatsapp_numbers')
    .set({ proxy_ciphertext: proxy?.sealed ?? null, proxy_redacted: proxy?.redacted ?? null, updated_at: at.getTime() })
    .where('id', '=', numberId)
    .execute();
}

/** The number's proxy URL as sealed, read by the session each time it opens a connection; null for none. */
export async function findSealedProxy(db: Executor, numberId: string): Promise<string | null> {
  const row = await db.selectFrom('whatsapp_numbers').select('proxy_ciphertext').where('id', '=', numberId).executeTakeFirst();
  return row?.proxy_ciphertext ?? null;
}

/** The phones of every number on an engine: the sandbox network's view of who is inside the gateway. */
export async function listPhonesOfEngine(db: Executor, engine: EngineKind): Promise<string[]> {
  const rows = await db.selectFrom('whatsapp_numbers').select('phone').where('engine', '=', engine).execute();
  return rows.map((row) => row.phone);
}
