import { PassThrough, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';

/**
 * A preParsing hook that gives a body a deadline when `applies` says so: the body must have
 * arrived in full within `timeoutMs` of its request, or the request is answered
 * `408 body_timeout` and its connection closed (plugins/early-refusals.ts). It is for bodies
 * sent without credentials (a sign-in form, an invite), which would otherwise hold a connection
 * for as long as their sender trickles bytes; bodies of authenticated callers keep no deadline
 * (docs/adr/0003).
 */
export function bodyDeadlineHook(timeoutMs: number, applies: (request: FastifyRequest) => boolean) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: Readable): Promise<Readable> => {
    if (!applies(request) || request.raw.complete) return payload;
    const { body, cancel } = withDeadline(payload, timeoutMs);
    // Once the request is answered (a refusal that never read the body, say), the deadline has
    // nothing left to guard: the lingering close bounds whatever still arrives.
    reply.raw.once('finish', cancel);
    reply.raw.once('close', cancel);
    return body;
  };
}

function withDeadline(source: Readable, timeoutMs: number): { body: Readable; cancel: () => void } {
  const body = new PassThrough();
  const timer = setTimeout(() => {
    source.unpipe(body);
    body.destroy(
      new AppError(
        'body_timeout',
        `The request body did not arrive within ${timeoutMs} ms; a request sent without signing in must be sent at once.`,
        { limit_ms: timeoutMs },
      ),
    );
  }, timeoutMs);
  timer.unref();
  const cancel = () => clearTimeout(timer);
  source.once('end', cancel);
  source.once('error', (error) => {
    cancel();
    body.destroy(error);
  });
  source.pipe(body);
  return { body, cancel };
}
