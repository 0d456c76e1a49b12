import type { FastifyRequest } from 'fastify';
import type { ApiKeyAuthenticator } from '../../accounts/api-key-auth.ts';
import type { ApiKey } from '../../domain/model.ts';
import { accountScope, type AccountScope } from '../../domain/tenant-scope.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKey | null;
  }
}

/**
 * An onRequest hook: authentication runs before the body is read, which is what puts 401
 * ahead of every body error in the documented order of checks.
 */
export function apiKeyAuthHook(authenticator: ApiKeyAuthenticator) {
  return async (request: FastifyRequest): Promise<void> => {
    request.apiKey = await authenticator.authenticate(request.headers.authorization);
  };
}

/** The account scope a request's API key grants: the only way the public API reads tenant data. */
export function keyScope(request: FastifyRequest): AccountScope {
  return accountScope(authenticatedKey(request).accountId);
}

function authenticatedKey(request: FastifyRequest): ApiKey {
  if (request.apiKey === null) throw new Error('A route that needs an API key was served without the auth hook.');
  return request.apiKey;
}
