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
        url: loggableUrl(request.url),
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
}

// An invite link's path is a bearer secret: whoever reads it can join the account.
const SECRET_PATH = /^(\/invite\/)[^/?#]+/;

/** The request URL with any secret path segment masked. */
export function loggableUrl(url: string): string {
  return url.replace(SECRET_PATH, '$1[redacted]');
}
