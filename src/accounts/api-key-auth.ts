import type { Logger } from 'pino';
import { API_KEY_PATTERN, hashApiKey } from '../domain/api-key.ts';
import { AppError } from '../domain/errors.ts';
import type { ApiKey } from '../domain/model.ts';
import type { Store } from '../store/database.ts';
import { findActiveApiKeyByHash, touchApiKeyLastUsed } from '../store/repositories/api-keys.ts';

const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/**
 * Turns a bearer key into the key's record. The key row is read on every request, never cached,
 * so that a key revoked from the CLI or the dashboard is refused on the very next request, from
 * any process. The lookup is by SHA-256 through a unique index: one point read.
 */
export class ApiKeyAuthenticator {
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async authenticate(authorization: string | undefined): Promise<ApiKey> {
    const match = authorization === undefined ? null : /^Bearer[ \t]+(\S*)[ \t]*$/i.exec(authorization);
    if (match === null) {
      throw new AppError('missing_api_key', 'Send your API key as "Authorization: Bearer <key>".');
    }
    const candidate = match[1] ?? '';
    if (!API_KEY_PATTERN.test(candidate)) {
      throw new AppError('invalid_api_key', 'The API key is malformed.', 'Keys look like <prefix>_live_sk_ followed by 64 hex digits.');
    }
    const key = await findActiveApiKeyByHash(this.store.db, hashApiKey(candidate));
    if (key === undefined) {
      throw new AppError('invalid_api_key', 'The API key is unknown or has been revoked.');
    }
    this.noteUse(key);
    return key;
  }

  /** last_used_at is written at most once a minute per key, off the request's path. */
  private noteUse(key: ApiKey): void {
    const now = Date.now();
    const lastWrite = Math.max(key.lastUsedAt?.getTime() ?? 0, this.lastUsedWrites.get(key.id) ?? 0);
    if (now - lastWrite < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(key.id, now);
    touchApiKeyLastUsed(this.store.db, key.id, new Date(now)).catch((error: unknown) => {
      this.logger.warn({ err: error, keyId: key.id }, 'could not record when an API key was last used');
    });
  }
}
