import type { Logger } from 'pino';
import { LazyLru } from '../domain/lazy-lru.ts';
import { API_KEY_PATTERN, hashApiKey } from '../domain/api-key.ts';
import { AppError } from '../domain/errors.ts';
import type { ApiKey } from '../domain/model.ts';
import type { Store } from '../store/database.ts';
import { findActiveApiKeyByHash, touchApiKeyLastUsed } from '../store/repositories/api-keys.ts';

const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** How long a key found active is trusted without reading its row again (docs/adr/0004). */
export const VERIFIED_KEY_TTL_MS = 2_000;

/**
 * Turns a bearer key into the key's record, looked up by SHA-256 through a unique index.
 *
 * A key found active is remembered for VERIFIED_KEY_TTL_MS, which takes a read off nearly every
 * request. A revocation made through this process (the dashboard) forgets the key at once, so it
 * is refused on the very next request; one made by another process (`wagw key revoke`, another
 * node) is seen when the entry expires. Unknown and revoked keys are never remembered.
 */
export class ApiKeyAuthenticator {
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly verified = new LazyLru<string, ApiKey>({ max: 10_000, ttl: VERIFIED_KEY_TTL_MS });
  /** Bumped by every revocation, so that a lookup that raced one does not remember its answer. */
  private revocations = 0;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async authenticate(authorization: string | undefined): Promise<ApiKey> {
    // "Bearer" with nothing after it is a missing key: HTTP trims a header's trailing blanks on
    // the wire, so "Bearer " and "Bearer" cannot be told apart and must get the same answer.
    const match = authorization === undefined ? null : /^Bearer[ \t]+(\S.*)$/is.exec(authorization);
    if (match === null) {
      throw new AppError('missing_api_key', 'Send your API key as "Authorization: Bearer <key>".');
    }
    // Whatever follows "Bearer" is the key, so that "Bearer <key> <junk>" is a malformed key.
    const candidate = (match[1] ?? '').trim();
    if (!API_KEY_PATTERN.test(candidate)) {
      throw new AppError('invalid_api_key', 'The API key is malformed: keys look like <prefix>_live_sk_ followed by 64 hex digits.');
    }
    const hash = hashApiKey(candidate);
    const key = this.verified.get(hash) ?? (await this.lookUp(hash));
    if (key === undefined) {
      throw new AppError('invalid_api_key', 'The API key is unknown or has been revoked.');
    }
    this.noteUse(key);
    return key;
  }

  /** Called after a revocation has committed, so that this process refuses the key from now on. */
  forget(keyId: string): void {
    this.revocations += 1;
    for (const [hash, key] of this.verified.entries()) {
      if (key.id === keyId) this.verified.delete(hash);
    }
  }

  /** Drops every cached key: after missing revocation notices, none of them can be trusted. */
  forgetAll(): void {
    this.revocations += 1;
    this.verified.clear();
  }

  private async lookUp(hash: string): Promise<ApiKey | undefined> {
    const revocationsBefore = this.revocations;
    const key = await findActiveApiKeyByHash(this.store.db, hash);
    // The row may have been read just before a revocation committed; such an answer may serve
    // the request in flight but must not be remembered for the next one.
    if (key !== undefined && this.revocations === revocationsBefore) this.verified.set(hash, key);
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
