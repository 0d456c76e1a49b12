import type { FastifyRequest } from 'fastify';
import type { OperatorTokensService } from '../../accounts/operator-tokens-service.ts';
import type { AuditActor } from '../../domain/audit.ts';
import type { OperatorToken } from '../../domain/operator-token.ts';
import { operatorScope, type OperatorScope } from '../../domain/tenant-scope.ts';

declare module 'fastify' {
  interface FastifyRequest {
    operatorToken: OperatorToken | null;
  }
}

/**
 * An onRequest hook of every operator API route: the token is checked before the body is read,
 * as an API key is, so 401 comes ahead of any body error. An API key is not a token (their
 * shapes differ), and a token is not an API key.
 */
export function operatorAuthHook(tokens: OperatorTokensService) {
  return async (request: FastifyRequest): Promise<void> => {
    request.operatorToken = await tokens.authenticate(request.headers.authorization);
  };
}

/** The operator scope a request's operator token grants: the only way the operator API reaches every account. */
export function tokenScope(request: FastifyRequest): OperatorScope {
  authenticatedToken(request);
  return operatorScope();
}

function authenticatedToken(request: FastifyRequest): OperatorToken {
  if (request.operatorToken === null) throw new Error('An operator API route was served without the operator auth hook.');
  return request.operatorToken;
}

/** The token as the audit log names an actor: its id, its name and hint, and the client's address. */
export function operatorActor(request: FastifyRequest): AuditActor {
  const token = authenticatedToken(request);
  return { kind: 'operator_token', id: token.id, label: `${token.name} (${token.hint})`, address: request.ip };
}

/** How the document states that a route takes an operator token. */
export const OPERATOR_SECURITY = { security: [{ operatorToken: [] }] } as const;

/** What every operator API call can answer: no token or a bad one, a database out for the moment, our own failure. */
export const OPERATOR_ERRORS = ['missing_operator_token', 'invalid_operator_token', 'storage_unavailable', 'internal_error'] as const;
