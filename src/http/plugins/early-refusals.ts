import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { notFound } from './errors.ts';

/** How much of a refused body is read and thrown away, and for how long, before closing. */
const LINGER_MAX_BYTES = 16 * 1024 * 1024;
const LINGER_MAX_MS = 5_000;

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
 * arrived, or when the client closes it, or past LINGER_MAX_BYTES or LINGER_MAX_MS, whichever
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

function connectionOf(request: IncomingMessage, response: ServerResponse): unknown {
  return request.socket ?? response.socket;
}

/** Requests whose connection already ends after a linger: a refusal may pass two hooks that each ask. */
const lingering = new WeakSet<IncomingMessage>();

/**
 * Ends the connection once the answer is written and the unread body has arrived (or the client
 * closes, or the linger's bounds pass). Also used by forms that stop reading part-way
 * (src/dashboard/streamed-form.ts). The answer should say `Connection: close`.
 */
export function closeAfterLinger(request: IncomingMessage, response: ServerResponse): void {
  if (lingering.has(request)) return;
  lingering.add(request);
  const socket = connectionOf(request, response) as Socket & { destroySoon(): void };
  // Node closes the socket of a `Connection: close` answer with destroySoon as soon as the answer
  // is written, which resets it under the bytes still arriving. Here the socket is ended only
  // once the answer is written and the body has arrived, so that the client reads the answer.
  socket.destroySoon = () => undefined;
  let pending = 2;
  const endWhenBothDone = () => {
    pending -= 1;
    if (pending === 0) socket.end();
  };
  response.once('finish', endWhenBothDone);
  // A request whose reading was abandoned part-way (an upload refused by its byte budget) never
  // ends: what is left of its body is only bytes for the parser to drop, so the answer alone ends
  // the connection, with a FIN the client sees after the answer.
  if (request.destroyed) endWhenBothDone();
  else request.once('end', endWhenBothDone);
  const close = () => socket.destroy();
  const timer = setTimeout(close, LINGER_MAX_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  let discardedBytes = 0;
  request.on('data', (chunk: Buffer) => {
    discardedBytes += chunk.length;
    if (discardedBytes > LINGER_MAX_BYTES) close();
  });
}
