import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { newId } from '../../domain/ids.ts';

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
        url: loggableUrl(request.url, request.routeOptions.url),
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

/**
 * The request URL as it may be logged. A request that matched a route with a secret parameter
 * is logged as its route pattern with the secret masked: the raw URL may spell the same path in
 * any %-encoding, so masking the raw text is not enough. A request that matched nothing keeps
 * its URL unless, decoded, it looks like it could hold a secret.
 */
export function loggableUrl(url: string, routePattern?: string): string {
  if (routePattern !== undefined) {
    return SECRET_PARAMETER.test(routePattern) ? routePattern.replaceAll(':token', '[redacted]') : url;
  }
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // A malformed escape: judged as written.
  }
  return SECRET_LOOKING_PATH.test(decoded.toLowerCase()) ? '[redacted: an unmatched path that may hold a secret]' : url;
}
