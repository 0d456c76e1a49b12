import type { FastifyRequest } from 'fastify';
import type { ApiKeyAuthenticator } from '../../accounts/api-key-auth.ts';
import { requireScope, type ApiKeyScope } from '../../domain/api-key-scopes.ts';
import type { AuditActor } from '../../domain/audit.ts';
import type { ApiKey } from '../../domain/model.ts';
import { accountScope, type AccountScope } from '../../domain/tenant-scope.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKey | null;
  }
}

/**
 * An onRequest hook: authentication and the key's scope are checked before the body is read,
 * which is what puts 401 and then 403 missing_scope ahead of every body error in the documented
 * order of checks. `operation` names the call in the refusal ("POST /webhooks").
 */
export function apiKeyAuthHook(authenticator: ApiKeyAuthenticator, scope: ApiKeyScope, operation: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const key = await authenticator.authenticate(request.headers.authorization);
    requireScope(key.scopes, scope, operation);
    request.apiKey = key;
  };
}

/**
 * How the document states the scope a route needs: as the bearer scheme's required role, which
 * OpenAPI 3.1 allows for any scheme, and as `x-required-scope` for tools that read scopes only of
 * OAuth (docs/api.md, Scopes).
 */
export function documentedScope(scope: ApiKeyScope) {
  return { security: [{ apiKey: [scope] }], 'x-required-scope': scope };
}

/** The account scope a request's API key grants: the only way the public API reads tenant data. */
export function keyScope(request: FastifyRequest): AccountScope {
  return accountScope(authenticatedKey(request).accountId);
}

/** The key as the audit log names an actor: its id, its name and hint, and the client's address. */
export function keyActor(request: FastifyRequest): AuditActor {
  const key = authenticatedKey(request);
  return { kind: 'api_key', id: key.id, label: `${key.name} (${key.hint})`, address: request.ip };
}

function authenticatedKey(request: FastifyRequest): ApiKey {
  if (request.apiKey === null) throw new Error('A route that needs an API key was served without the auth hook.');
  return request.apiKey;
}
