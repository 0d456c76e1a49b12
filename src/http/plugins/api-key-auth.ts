import type { FastifyRequest } from 'fastify';
import type { ApiKeyAuthenticator } from '../../accounts/api-key-auth.ts';
import type { ApiKey } from '../../domain/model.ts';

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

export function authenticatedKey(request: FastifyRequest): ApiKey {
  if (request.apiKey === null) throw new Error('A route that needs an API key was served without the auth hook.');
  return request.apiKey;
}
