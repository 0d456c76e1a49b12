import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { notFound } from './errors.ts';
import { closeAfterLinger, connectionOf } from '../../web/linger.ts';

/**
 * Courtesies and bounds for requests refused before their body matters.
 *
 * Any answer given while the body is still arriving, or before it was read to its end, ends the
 * connection, whatever its status: a 413 from the Content-Length, a 401 from the Authorization
 * header, a 404 from the path, a form's 408, but also a 200 from /health to a GET with a body, the
 * dashboard's 303 to its sign-in page, a 429 that stopped reading an upload part-way. The gateway
 * will never use that body, and the promise that a body may take as long as it needs
 * (docs/adr/0003) is for callers whose body is being read; a status list would leave whichever
 * answer it forgot as a way to hold a slot with a trickled body (issue 38). Closing at once would make the kernel
 * reset the connection under unread bytes, and many clients then report a broken pipe instead
 * of the answer. So the answer says `Connection: close`, the rest of the body is read and
 * discarded (a lingering close, RFC 9112 §9.6), and the socket is closed once the body has
 * arrived, or when the client closes it, or past the linger's bounds (src/web/linger.ts), whichever
 * comes first.
 *
 * A client that asks `Expect: 100-continue` is told to go ahead only when the headers leave a
 * chance of success: not when the body is over the limit, nor when a keyed route has no key.
 * Those get their 413 or 401 at once, and the body is never sent.
 */
interface RefusalOptions {
  bodyLimitBytes: number;
  /** Paths whose bodies may be larger than bodyLimitBytes (uploads), with their own limit. */
  bodyLimitByPath?: ReadonlyMap<string, number>;
  /** Whether a path takes an API key (the public operations, whose registry knows them). */
  isKeyedPath: (path: string) => boolean;
}

export function registerEarlyRefusals(app: FastifyInstance, options: RefusalOptions): void {
  // No route serves an unknown path, so its body cannot matter: the 404 comes from the request
  // line, before any of the body is read.
  app.addHook('onRequest', async (request) => {
    if (request.is404) throw notFound(request);
  });

  app.addHook('onSend', async (request, reply) => {
    if (!isBodyUnread(request.raw, reply.raw)) return;
    void reply.header('connection', 'close');
    closeAfterLinger(request.raw, reply.raw);
  });

  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!refusedByHeaders(request, options)) response.writeContinue();
    app.server.emit('request', request, response);
  });
}

function refusedByHeaders(request: IncomingMessage, options: RefusalOptions): boolean {
  const path = (request.url ?? '').split('?')[0]!.replace(/\/$/, '');
  if (Number(request.headers['content-length']) > (options.bodyLimitByPath?.get(path) ?? options.bodyLimitBytes)) return true;
  return options.isKeyedPath(path) && !/^Bearer[ \t]+\S/i.test(request.headers.authorization ?? '');
}

/** Whether the request has a body that has not arrived, or that nobody read to its end. */
function isBodyUnread(request: IncomingMessage, response: ServerResponse): boolean {
  // Only a real connection lingers; an injected request has no socket to keep. A request whose
  // reading was abandoned (destroyed) has let go of its socket; the answer still holds it.
  if (!(connectionOf(request, response) instanceof Socket)) return false;
  if (request.headers['transfer-encoding'] === undefined && !(Number(request.headers['content-length'] ?? 0) > 0)) return false;
  return !request.complete || !request.readableEnded;
}
