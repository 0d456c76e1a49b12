import type { OperatorToken } from '../../domain/operator-token.ts';
import type { Executor } from '../database.ts';
import type { Selectable } from 'kysely';
import type { OperatorTokensTable } from '../schema-accounts.ts';

function toOperatorToken(row: Selectable<OperatorTokensTable>): OperatorToken {
  return {
    id: row.id,
    name: row.name,
    hint: row.hint,
    createdAt: new Date(Number(row.created_at)),
    revokedAt: row.revoked_at === null ? null : new Date(Number(row.revoked_at)),
    lastUsedAt: row.last_used_at === null ? null : new Date(Number(row.last_used_at)),
  };
}

export async function insertOperatorToken(db: Executor, token: OperatorToken, hash: string): Promise<void> {
  await db
    .insertInto('operator_tokens')
    .values({ id: token.id, name: token.name, token_hash: hash, hint: token.hint, created_at: token.createdAt.getTime() })
    .execute();
}

/** Every token, newest first: there are a handful, made by hand. */
export async function listOperatorTokens(db: Executor): Promise<OperatorToken[]> {
  const rows = await db.selectFrom('operator_tokens').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toOperatorToken);
}

export async function findOperatorToken(db: Executor, id: string): Promise<OperatorToken | undefined> {
  const row = await db.selectFrom('operator_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toOperatorToken(row);
}

/** The token of this hash if it is not revoked; the lookup goes through the unique index. */
export async function findActiveOperatorTokenByHash(db: Executor, hash: string): Promise<OperatorToken | undefined> {
  const row = await db
    .selectFrom('operator_tokens')
    .selectAll()
    .where('token_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row === undefined ? undefined : toOperatorToken(row);
}

export async function revokeOperatorToken(db: Executor, id: string, at: Date): Promise<void> {
  await db.updateTable('operator_tokens').set({ revoked_at: at.getTime() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
}

export async function touchOperatorTokenLastUsed(db: Executor, id: string, at: Date): Promise<void> {
  await db.updateTable('operator_tokens').set({ last_used_at: at.getTime() }).where('id', '=', id).execute();
}
