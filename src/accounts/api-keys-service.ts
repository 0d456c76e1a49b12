import { SYSTEM_ACTOR, type AuditActor } from '../domain/audit.ts';
import { recordAudit } from '../audit/audit-trail.ts';
import { generateApiKey } from '../domain/api-key.ts';
import { DEFAULT_API_KEY_SCOPES, parseApiKeyScopes } from '../domain/api-key-scopes.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { ApiKey } from '../domain/model.ts';
import type { Store } from '../store/database.ts';
import { findAccountById } from '../store/repositories/accounts.ts';
import { findApiKeyById, insertApiKey, listApiKeys, revokeApiKey } from '../store/repositories/api-keys.ts';
import { signalNodes } from '../store/repositories/cluster-signals.ts';
import { findUserById } from '../store/repositories/users.ts';
import { scopeCovers, type TenantScope } from '../domain/tenant-scope.ts';

/** Long enough for any sensible label, short enough to list in a table. */
export const MAX_API_KEY_NAME_LENGTH = 100;

export interface CreateApiKeyInput {
  accountId: string;
  name?: string;
  createdByUserId?: string;
  /** What the key may do; without it, what every key could do before scopes (read and send). */
  scopes?: readonly string[];
  /** Who makes it, for the audit log; SYSTEM_ACTOR only for code with no person behind it. */
  actor?: AuditActor;
}

export interface CreatedApiKey {
  apiKey: ApiKey;
  /** The full key: returned here once and never stored. */
  plaintext: string;
}

export class ApiKeysService {
  constructor(
    private readonly store: Store,
    private readonly keyPrefix: string,
    /** Told of each revocation once it has committed, so that no cache keeps trusting the key. */
    private readonly keyRevoked: (keyId: string) => void = () => undefined,
  ) {}

  async createKey(input: CreateApiKeyInput): Promise<CreatedApiKey> {
    const name = input.name?.trim() || 'default';
    if (name.length > MAX_API_KEY_NAME_LENGTH) {
      throw new AppError(
        'invalid_argument',
        `A key name can be at most ${MAX_API_KEY_NAME_LENGTH} characters; this one has ${name.length}.`,
      );
    }
    if ((await findAccountById(this.store.db, input.accountId)) === undefined) {
      throw new AppError('account_not_found', `There is no account ${input.accountId}.`);
    }
    let createdByEmail: string | null = null;
    if (input.createdByUserId !== undefined) {
      const user = await findUserById(this.store.db, input.createdByUserId);
      if (user === undefined || (user.accountId !== input.accountId && !user.isOperator)) {
        throw new AppError('user_not_found', `There is no user ${input.createdByUserId} in account ${input.accountId}.`);
      }
      createdByEmail = user.email;
    }
    const scopes = input.scopes === undefined ? DEFAULT_API_KEY_SCOPES : parseApiKeyScopes(input.scopes);
    const generated = generateApiKey(this.keyPrefix);
    const apiKey: ApiKey = {
      id: newId('apiKey'),
      accountId: input.accountId,
      name,
      hint: generated.hint,
      createdByUserId: input.createdByUserId ?? null,
      createdByEmail,
      scopes,
      createdAt: new Date(),
      revokedAt: null,
      lastUsedAt: null,
    };
    await this.store.db.transaction().execute(async (trx) => {
      await insertApiKey(trx, apiKey, generated.hash);
      await recordAudit(trx, input.actor ?? SYSTEM_ACTOR, 'api_key.created', {
        accountId: apiKey.accountId,
        targetId: apiKey.id,
        details: { name: apiKey.name, scopes: apiKey.scopes },
      });
    });
    return { apiKey, plaintext: generated.plaintext };
  }

  listKeys(accountId: string): Promise<ApiKey[]> {
    return listApiKeys(this.store.db, accountId);
  }

  /**
   * Revokes a key. A key outside the scope is not found, so that no account can revoke
   * another's. Revoking twice is harmless.
   */
  async revokeKey(scope: TenantScope, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<ApiKey> {
    const key = await findApiKeyById(this.store.db, id);
    if (key === undefined || !scopeCovers(scope, key.accountId)) {
      throw new AppError('api_key_not_found', `There is no API key ${id}.`);
    }
    const at = key.revokedAt ?? new Date();
    if (key.revokedAt === null) {
      await this.store.db.transaction().execute(async (trx) => {
        await revokeApiKey(trx, id, at);
        await recordAudit(trx, actor, 'api_key.revoked', { accountId: key.accountId, targetId: id, details: { name: key.name } });
        // Every other node drops the key from its cache when this commits (LISTEN/NOTIFY).
        await signalNodes(trx, this.store.dialect, `key:${id}`);
      });
    }
    this.keyRevoked(id);
    return { ...key, revokedAt: at };
  }
}
