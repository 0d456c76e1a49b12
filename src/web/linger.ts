import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How much of a refused body is read and thrown away, and for how long, before closing. */
const LINGER_MAX_BYTES = 16 * 1024 * 1024;
const LINGER_MAX_MS = 5_000;

export function connectionOf(request: IncomingMessage, response: ServerResponse): unknown {
  return request.socket ?? response.socket;
}

/** Requests whose connection already ends after a linger: a refusal may pass two hooks that each ask. */
const lingering = new WeakSet<IncomingMessage>();

/**
 * Ends the connection once the answer is written and the unread body has arrived (or the client
 * closes, or the linger's bounds pass). Also used by forms that stop reading part-way
 * (src/dashboard/streamed-form.ts) and by the API's early refusals (src/http/plugins/early-refusals.ts). The answer should say `Connection: close`.
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
