import { scopesFromStored } from '../../domain/api-key-scopes.ts';
import type { ApiKey } from '../../domain/model.ts';
import type { Executor } from '../database.ts';
import type { ApiKeyRow } from '../schema-accounts.ts';

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    hint: row.hint,
    createdByUserId: row.created_by_user_id,
    createdByEmail: row.created_by_email ?? null,
    scopes: scopesFromStored(row.scopes),
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
  };
}

export async function insertApiKey(db: Executor, key: ApiKey, keyHash: string): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      account_id: key.accountId,
      name: key.name,
      key_hash: keyHash,
      hint: key.hint,
      created_by_user_id: key.createdByUserId,
      created_by_email: key.createdByEmail,
      scopes: key.scopes.join(','),
      created_at: key.createdAt.getTime(),
      revoked_at: null,
      last_used_at: null,
    })
    .execute();
}

/** The hash is the lookup key: the unique index makes this one point read per request. */
export async function findActiveApiKeyByHash(db: Executor, keyHash: string): Promise<ApiKey | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && toApiKey(row);
}

export async function findApiKeyById(db: Executor, id: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toApiKey(row);
}

export async function listApiKeys(db: Executor, accountId: string): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toApiKey);
}

export async function revokeApiKey(db: Executor, id: string, at: Date): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: at.getTime() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
}

export async function touchApiKeyLastUsed(db: Executor, id: string, at: Date): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at.getTime() }).where('id', '=', id).execute();
}
