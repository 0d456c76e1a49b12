import type { Executor } from '../database.ts';

/** A sealed Signal key to store: its category (pre-key, session, …), its id and its ciphertext. */
export interface SealedAuthKey {
  category: string;
  keyId: string;
  valueCiphertext: string;
}

export interface AuthKeyAddress {
  category: string;
  keyId: string;
}

// Each upserted row binds five parameters. SQLite allows 32,766 per statement and PostgreSQL
// 65,535; Baileys stores hundreds of pre-keys at once, so large writes go in slices of this many.
const UPSERT_ROWS_PER_STATEMENT = 1_000;

/** The sealed values of the keys of one category that exist, by key id, in one query. */
export async function readKeys(db: Executor, numberId: string, category: string, keyIds: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (keyIds.length === 0) return found;
  const rows = await db
    .selectFrom('baileys_auth_keys')
    .select(['key_id', 'value_ciphertext'])
    .where('number_id', '=', numberId)
    .where('category', '=', category)
    .where('key_id', 'in', [...keyIds])
    .execute();
  for (const row of rows) found.set(row.key_id, row.value_ciphertext);
  return found;
}

/**
 * Stores some keys and removes others. It takes several statements, so callers that need the
 * change to be all-or-nothing (the auth-state store does) pass a transaction.
 */
export async function writeKeys(
  db: Executor,
  numberId: string,
  upserts: readonly SealedAuthKey[],
  deletions: readonly AuthKeyAddress[],
  at: Date,
): Promise<void> {
  for (let start = 0; start < upserts.length; start += UPSERT_ROWS_PER_STATEMENT) {
    const slice = upserts.slice(start, start + UPSERT_ROWS_PER_STATEMENT);
    await db
      .insertInto('baileys_auth_keys')
      .values(
        slice.map((key) => ({
          number_id: numberId,
          category: key.category,
          key_id: key.keyId,
          value_ciphertext: key.valueCiphertext,
          updated_at: at.getTime(),
        })),
      )
      .onConflict((conflict) =>
        conflict.columns(['number_id', 'category', 'key_id']).doUpdateSet((update) => ({
          value_ciphertext: update.ref('excluded.value_ciphertext'),
          updated_at: update.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
  for (const [category, keyIds] of groupByCategory(deletions)) {
    await db
      .deleteFrom('baileys_auth_keys')
      .where('number_id', '=', numberId)
      .where('category', '=', category)
      .where('key_id', 'in', keyIds)
      .execute();
  }
}

function groupByCategory(addresses: readonly AuthKeyAddress[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { category, keyId } of addresses) {
    const group = groups.get(category);
    if (group) group.push(keyId);
    else groups.set(category, [keyId]);
  }
  return groups;
}

export async function readCreds(db: Executor, numberId: string): Promise<string | undefined> {
  const row = await db.selectFrom('baileys_auth_creds').select('creds_ciphertext').where('number_id', '=', numberId).executeTakeFirst();
  return row?.creds_ciphertext;
}

export async function writeCreds(db: Executor, numberId: string, credsCiphertext: string, at: Date): Promise<void> {
  await db
    .insertInto('baileys_auth_creds')
    .values({ number_id: numberId, creds_ciphertext: credsCiphertext, updated_at: at.getTime() })
    .onConflict((conflict) =>
      conflict.column('number_id').doUpdateSet((update) => ({
        creds_ciphertext: update.ref('excluded.creds_ciphertext'),
        updated_at: update.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/**
 * Forgets a session: its creds and every key, as after a logout. Pass a transaction, so that no
 * reader ever sees keys without creds or the reverse.
 */
export async function deleteAuthState(db: Executor, numberId: string): Promise<void> {
  await db.deleteFrom('baileys_auth_keys').where('number_id', '=', numberId).execute();
  await db.deleteFrom('baileys_auth_creds').where('number_id', '=', numberId).execute();
}
