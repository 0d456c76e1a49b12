import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { newId } from '../../domain/ids.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Query parameters of the route that are bearer secrets (a signed link's signature): never logged. */
    secretQueryParameters?: readonly string[];
  }
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's own X-Request-Id is kept when it is safe to echo and log; otherwise one is made. */
export function requestIdFor(request: IncomingMessage): string {
  const supplied = request.headers['x-request-id'];
  return typeof supplied === 'string' && CLIENT_REQUEST_ID.test(supplied) ? supplied : newId('request');
}

/** Every response carries X-Request-Id, and every request leaves exactly one log line. */
export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('X-Request-Id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url,
        url: loggableUrl(request.url, request.routeOptions.url, request.routeOptions.config.secretQueryParameters),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
}

// Route parameters that are bearer secrets: an invite link's token lets whoever reads it join.
const SECRET_PARAMETER = /:token\b/;
// Unmatched paths are judged after decoding, in lower case, so "/%69nvite/…" is caught too.
const SECRET_LOOKING_PATH = /\/invite[/;]/;
// On an unmatched path no route says which parameters are secret, so any that could be one is masked.
const SECRET_LOOKING_QUERY_PARAMETERS: readonly string[] = ['signature'];

/**
 * The request URL as it may be logged. A request that matched a route with a secret parameter
 * is logged as its route pattern with the secret masked: the raw URL may spell the same path in
 * any %-encoding, so masking the raw text is not enough. The values of the query parameters a
 * route declares secret are masked, whatever the spelling of their names. A request that matched
 * nothing keeps its URL unless, decoded, it looks like it could hold a secret.
 */
export function loggableUrl(url: string, routePattern?: string, secretQueryParameters: readonly string[] = []): string {
  if (routePattern !== undefined) {
    return SECRET_PARAMETER.test(routePattern)
      ? routePattern.replaceAll(':token', '[redacted]')
      : withSecretQueryMasked(url, secretQueryParameters);
  }
  const decoded = decodedOrAsWritten(url);
  if (SECRET_LOOKING_PATH.test(decoded.toLowerCase())) return '[redacted: an unmatched path that may hold a secret]';
  return withSecretQueryMasked(url, SECRET_LOOKING_QUERY_PARAMETERS);
}

/** The URL with the values of the named query parameters masked; names are compared decoded, as the query parser reads them. */
function withSecretQueryMasked(url: string, secretNames: readonly string[]): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1 || secretNames.length === 0) return url;
  const pairs = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const nameEnd = pair.indexOf('=');
      const name = nameEnd === -1 ? pair : pair.slice(0, nameEnd);
      return secretNames.includes(decodedOrAsWritten(name.replaceAll('+', ' '))) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, queryStart)}?${pairs.join('&')}`;
}

function decodedOrAsWritten(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // A malformed escape: judged as written.
    return text;
  }
}
