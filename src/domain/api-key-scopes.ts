import { AppError } from './errors.ts';

/**
 * What an API key may do (docs/adr/0052-api-key-scopes.md). Each public operation needs exactly
 * one of these, declared with it in the registry:
 * - `read`: read the account's messages, numbers, chats, contacts, groups and settings;
 * - `send`: everything else a key could do before scopes: send, act on messages and chats,
 *   change numbers and settings;
 * - `webhooks`: manage the account's webhooks.
 */
export const apiKeyScopes = ['read', 'send', 'webhooks'] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];

/** What a key made without naming scopes gets: what every key could do before scopes existed. */
export const DEFAULT_API_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'send'];

function isApiKeyScope(value: string): value is ApiKeyScope {
  return (apiKeyScopes as readonly string[]).includes(value);
}

/**
 * The scopes a caller asked for, in the catalogue's order, without repeats. An unknown name is
 * refused rather than dropped: a typo must not make a key with fewer powers than intended, nor
 * one that silently lacks the power asked for.
 */
export function parseApiKeyScopes(requested: readonly string[]): ApiKeyScope[] {
  const names = requested.map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !isApiKeyScope(name));
  if (unknown.length > 0)
    throw new AppError('invalid_argument', `Unknown API key scope ${unknown.join(', ')}; the scopes are ${apiKeyScopes.join(', ')}.`, {
      field: 'scopes',
    });
  if (names.length === 0)
    throw new AppError('invalid_argument', `A key needs at least one scope: ${apiKeyScopes.join(', ')}.`, { field: 'scopes' });
  return apiKeyScopes.filter((scope) => names.includes(scope));
}

/** The scopes stored for a key, as the store keeps them (a comma-separated list); names this version does not know are ignored. */
export function scopesFromStored(stored: string): ApiKeyScope[] {
  const names = stored.split(',');
  return apiKeyScopes.filter((scope) => names.includes(scope));
}

/** Refuses a key that lacks the scope an operation needs: 403 missing_scope, naming it. */
export function requireScope(held: readonly ApiKeyScope[], needed: ApiKeyScope, operation: string): void {
  if (held.includes(needed)) return;
  throw new AppError(
    'missing_scope',
    `This API key lacks the ${needed} scope, which ${operation} needs. Create a key with it in the dashboard (API keys) or with ` +
      `\`wagw key create --scopes\`.`,
    { required_scope: needed, key_scopes: [...held] },
  );
}
