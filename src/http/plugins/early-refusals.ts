import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** How much of a refused body is read and thrown away, and for how long, before closing. */
const LINGER_MAX_BYTES = 16 * 1024 * 1024;
const LINGER_MAX_MS = 5_000;

/**
 * Two courtesies for clients whose request is refused before its body matters.
 *
 * A body over the limit is answered 413 from its Content-Length, while the client is still
 * sending. Closing at once would make the kernel reset the connection under unread bytes, and
 * many clients then report a broken pipe instead of the 413. So the 413 keeps the connection,
 * the rest of the body is read and discarded (a lingering close, RFC 9112 §9.6), and the socket
 * is closed only if that goes past LINGER_MAX_BYTES or LINGER_MAX_MS.
 *
 * A client that asks `Expect: 100-continue` is told to go ahead only when the headers leave a
 * chance of success: not when the body is over the limit, nor when a keyed route has no key.
 * Those get their 413 or 401 at once, and the body is never sent.
 */
interface RefusalOptions {
  bodyLimitBytes: number;
  /** Paths whose bodies may be larger than bodyLimitBytes (uploads), with their own limit. */
  bodyLimitByPath?: ReadonlyMap<string, number>;
  keyedPaths: ReadonlySet<string>;
}

export function registerEarlyRefusals(app: FastifyInstance, options: RefusalOptions): void {
  app.addHook('onSend', async (request, reply) => {
    if (reply.statusCode !== 413 || request.raw.complete) return;
    void reply.removeHeader('connection');
    lingerOnRefusedBody(request.raw);
  });

  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!refusedByHeaders(request, options)) response.writeContinue();
    app.server.emit('request', request, response);
  });
}

function refusedByHeaders(request: IncomingMessage, options: RefusalOptions): boolean {
  const path = (request.url ?? '').split('?')[0]!.replace(/\/$/, '');
  if (Number(request.headers['content-length']) > (options.bodyLimitByPath?.get(path) ?? options.bodyLimitBytes)) return true;
  return options.keyedPaths.has(path) && !/^Bearer[ \t]+\S/i.test(request.headers.authorization ?? '');
}

export function lingerOnRefusedBody(request: IncomingMessage): void {
  let discardedBytes = 0;
  const close = () => request.socket.destroy();
  const timer = setTimeout(close, LINGER_MAX_MS);
  timer.unref();
  request.on('data', (chunk: Buffer) => {
    discardedBytes += chunk.length;
    if (discardedBytes > LINGER_MAX_BYTES) close();
  });
  request.once('end', () => clearTimeout(timer));
  request.once('close', () => clearTimeout(timer));
}
