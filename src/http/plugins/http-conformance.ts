import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';

/**
 * Two HTTP rules that Node enforces by answering on its own, with an empty body outside our
 * envelope, are enforced here instead so that the answer is a documented one.
 *
 * - An HTTP/1.1 request without a Host header gets 400 `invalid_request`. Node's own check is
 *   turned off in app.ts (`requireHostHeader: false`) so that this one can answer.
 * - An Expect header other than 100-continue is ignored rather than answered 417: the gateway
 *   meets no other expectation, and RFC 9110 lets a server carry on with the request.
 */
export function registerHttpConformance(app: FastifyInstance): void {
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));

  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new AppError('invalid_request', 'The Host header is missing; HTTP/1.1 requires it.');
    }
  });
}
