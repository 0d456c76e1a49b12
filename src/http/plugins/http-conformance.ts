import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';

/**
 * HTTP rules that Node or the query parser would otherwise settle on their own, outside the
 * documented answers, are enforced here.
 *
 * - An HTTP/1.1 request without a Host header gets 400 `invalid_request`. Node's own check is
 *   turned off in app.ts (`requireHostHeader: false`) so that this one can answer.
 * - An Expect header other than 100-continue is ignored rather than answered 417: the gateway
 *   meets no other expectation, and RFC 9110 lets a server carry on with the request.
 * - A query string with a malformed %-escape gets 400 `invalid_request`, as the path does.
 */
export function registerHttpConformance(app: FastifyInstance): void {
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));

  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new AppError('invalid_request', 'The Host header is missing; HTTP/1.1 requires it.');
    }
    if (!wellEscapedQuery(request.raw.url ?? '')) {
      throw new AppError('invalid_request', 'The URL is not valid: its query string holds a malformed %-escape.');
    }
  });
}

/**
 * Whether every %-escape of the URL's query string is whole and spells UTF-8. The query parser
 * keeps a broken one as written, so `phone=%ZZ` would be judged as that text (a 404 for a phone
 * nobody has); a broken escape in the path is refused as a bad URL, and the query is held to the
 * same rule.
 */
function wellEscapedQuery(url: string): boolean {
  const start = url.indexOf('?');
  if (start < 0 || !url.includes('%', start)) return true;
  try {
    decodeURIComponent(url.slice(start + 1));
    return true;
  } catch {
    return false;
  }
}
