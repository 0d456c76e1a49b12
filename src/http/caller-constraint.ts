import type { IncomingMessage } from 'node:http';
import type { ConstraintStrategy, Handler, HTTPVersion } from 'find-my-way';

/**
 * `GET /messages` and `GET /numbers` are both a dashboard page and an API operation (the API's
 * rule is that every operation answers at `/x` and `/api/x`). One path serves two callers: a
 * request with a Bearer Authorization header is an API client, and everything else is a
 * browser. A browser never sends a bearer token; it may send Basic credentials, when an
 * operator puts the dashboard behind a proxy's password, and that stays the dashboard's. Routes constrained to `api` win for API clients;
 * every other route is unconstrained and serves both, so nothing else changes (docs/adr/0021).
 */
export const callerConstraint: ConstraintStrategy<HTTPVersion.V1, string> = {
  name: 'caller',
  storage() {
    const handlers = new Map<string, Handler<HTTPVersion.V1>>();
    return {
      get: (caller: string) => handlers.get(caller) ?? null,
      set: (caller: string, handler: Handler<HTTPVersion.V1>) => void handlers.set(caller, handler),
    };
  },
  deriveConstraint(request: IncomingMessage) {
    return BEARER.test(request.headers.authorization ?? '') ? 'api' : 'browser';
  },
  // A browser's request, or an API client's for any other path, falls through to the unconstrained routes.
  mustMatchWhenDerived: false,
};

const BEARER = /^\s*bearer\b/i;

/** Route options for the API side of a path the dashboard also serves. */
export const FOR_API_CLIENTS = { constraints: { caller: 'api' } } as const;
