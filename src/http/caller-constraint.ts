import type { IncomingMessage } from 'node:http';
import type { ConstraintStrategy, Handler, HTTPVersion } from 'find-my-way';

/**
 * `GET /messages`, `GET /numbers` and `POST /numbers/{id}/resume` are both a dashboard route and
 * an API operation (the API's rule is that every operation answers at `/x` and `/api/x`). One
 * path serves two callers: a request with a Bearer Authorization header, a JSON body, or an Accept
 * that asks for JSON and not for a page is an API client, and everything else is a browser. A browser never sends a bearer token; it may send Basic credentials, when an
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
    // A JSON body is a program's too: the dashboard's forms post form data, and its script only reads.
    // So is a request that asks for JSON and not for a page: a keyless program is told 401, not sent to sign in.
    const { authorization, accept } = request.headers;
    const api = BEARER.test(authorization ?? '') || JSON_BODY.test(request.headers['content-type'] ?? '') || asksForJsonOnly(accept);
    return api ? 'api' : 'browser';
  },
  // A browser's request, or an API client's for any other path, falls through to the unconstrained routes.
  mustMatchWhenDerived: false,
};

const BEARER = /^\s*bearer\b/i;
const JSON_TYPE = /(?:^|,)\s*application\/(?:[\w.+-]+\+)?json\b/i;
const PAGE_TYPE = /(?:^|,)\s*(?:text\/html|application\/xhtml\+xml)\b/i;

/** An Accept that names JSON and no page: a browser's navigation always names text/html. */
function asksForJsonOnly(accept: string | undefined): boolean {
  return accept !== undefined && JSON_TYPE.test(accept) && !PAGE_TYPE.test(accept);
}
const JSON_BODY = /^\s*application\/(?:[\w.+-]+\+)?json\b/i;

/** Route options for the API side of a path the dashboard also serves. */
export const FOR_API_CLIENTS = { constraints: { caller: 'api' } } as const;
