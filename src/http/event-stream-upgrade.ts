import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { ApiKeyAuthenticator } from '../accounts/api-key-auth.ts';
import { requireScope } from '../domain/api-key-scopes.ts';
import { AppError, httpStatusFor, toEnvelope } from '../domain/errors.ts';
import type { ApiKey } from '../domain/model.ts';
import { accountScope } from '../domain/tenant-scope.ts';
import { isStorageOutage } from '../store/outage-errors.ts';
import type { EventStreams } from '../webhooks/event-streams.ts';
import type { WebhooksService } from '../webhooks/webhooks-service.ts';
import { withRetryAfter } from './plugins/errors.ts';
import { requestIdFor } from './plugins/request-context.ts';

/** Where a stream's client connects, at both of the API's prefixes. */
const STREAM_PATH = /^\/(?:api\/)?webhooks\/([^/]+)\/stream$/;
/** The one query parameter a connection takes: the last event it saw, to resume after. */
const RESUME_PARAMETER = 'last_event_id';
/** A client sends nothing on a stream; a frame of more than this is cut off before it is read. */
const MAX_CLIENT_FRAME_BYTES = 1024;

export interface EventStreamAccess {
  authenticator: Pick<ApiKeyAuthenticator, 'authenticate'>;
  webhooks: Pick<WebhooksService, 'getStream'>;
  eventStreams: Pick<EventStreams, 'serve'>;
  logger: Logger;
}

/**
 * Accepts WebSocket connections to event streams (docs/adr/0068-event-streams.md) on the HTTP
 * server, beside Fastify: a WebSocket is an Upgrade, which Node hands to this listener and never to
 * Fastify's routes. A connection is checked as a request is (the API key, the `webhooks` scope, the
 * stream being the account's, no unknown query parameter) and refused with the API's error body
 * and status before any upgrade. A plain GET of the same path is the registry's operation, which
 * answers how far the stream has got.
 */
export function acceptEventStreams(server: Server, access: EventStreamAccess): void {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const requestId = requestIdFor(request);
    // Node takes its own error listener off a socket it hands to 'upgrade'; without one, a client
    // that resets the connection while its key is being checked would throw an unhandled 'error'
    // and end the process. Until the upgrade, an error only ends this connection.
    const dropped = (error: Error) => {
      access.logger.debug({ err: error, requestId }, 'an event stream client went away before its upgrade');
      socket.destroy();
    };
    socket.on('error', dropped);
    void checkConnection(request, access)
      .then(({ webhookId, after }) => {
        socket.off('error', dropped);
        if (socket.destroyed) return;
        // The key is asked again for the life of the connection; the stream's being there is the
        // connection's own look (a deleted stream closes with its own code).
        const authorized = () =>
          authorizedKey(request, access).then(
            () => true,
            (error: unknown) => (error instanceof AppError ? false : Promise.reject(error)),
          );
        sockets.handleUpgrade(request, socket, head, (webSocket) => access.eventStreams.serve(webhookId, webSocket, after, authorized));
        access.logger.info({ requestId, webhookId, resumed: after !== undefined }, 'event stream connected');
      })
      .catch((error: unknown) => refuse(socket, withRetryAfter(asAppError(error, access.logger, requestId)), requestId));
  });
}

async function checkConnection(request: IncomingMessage, access: EventStreamAccess): Promise<{ webhookId: string; after?: string }> {
  const url = new URL(request.url ?? '/', 'http://gateway');
  const match = STREAM_PATH.exec(url.pathname);
  if (match === null || request.method !== 'GET') {
    throw new AppError(
      'not_found',
      `There is no WebSocket at ${request.method} ${url.pathname}; event streams are at GET /webhooks/{id}/stream.`,
    );
  }
  // The key first, as for every request: a caller without one learns that before anything else.
  const key = await authorizedKey(request, access);
  const after = resumePoint(url.searchParams);
  let webhookId: string;
  try {
    webhookId = decodeURIComponent(match[1]!);
  } catch {
    throw new AppError('invalid_request', 'The URL is not valid: it holds a malformed %-escape.');
  }
  await access.webhooks.getStream(accountScope(key.accountId), webhookId);
  return { webhookId, ...(after !== undefined && { after }) };
}

/** The connection's key, active and with the `webhooks` scope; refused otherwise. */
async function authorizedKey(request: IncomingMessage, access: EventStreamAccess): Promise<ApiKey> {
  const key = await access.authenticator.authenticate(request.headers.authorization);
  requireScope(key.scopes, 'webhooks', 'streamWebhookEvents');
  return key;
}

/** `last_event_id`, given at most once and not empty; any other parameter is refused, not ignored. */
function resumePoint(query: URLSearchParams): string | undefined {
  for (const name of new Set(query.keys())) {
    if (name !== RESUME_PARAMETER) {
      throw new AppError('invalid_request', `Unknown query parameter ${name}; a stream takes only ${RESUME_PARAMETER}.`, {
        field: name,
        problem: 'unknown',
      });
    }
  }
  const values = query.getAll(RESUME_PARAMETER);
  if (values.length === 0) return undefined;
  const [value] = values;
  if (values.length > 1 || value === undefined || value === '' || value.length > 64) {
    throw new AppError('invalid_request', `${RESUME_PARAMETER} is one event id (evt_…), the last the client saw.`, {
      field: RESUME_PARAMETER,
      problem: 'invalid',
    });
  }
  return value;
}

function asAppError(error: unknown, logger: Logger, requestId: string): AppError {
  if (error instanceof AppError) return error;
  if (isStorageOutage(error)) return new AppError('storage_unavailable', 'The database is unavailable; connect again shortly.');
  logger.error({ err: error, requestId }, 'an event stream connection failed unexpectedly');
  return new AppError('internal_error', 'Something went wrong on our side; the request_id names it in our log.');
}

/** The refusal as an HTTP answer on the raw socket, in the API's error body, and the socket closed. */
function refuse(socket: Duplex, error: AppError, requestId: string): void {
  const status = httpStatusFor(error.code);
  const body = JSON.stringify(toEnvelope(error, requestId));
  const retryAfter = error.meta?.retry_after_seconds;
  const headers = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...(typeof retryAfter === 'number' ? [`Retry-After: ${retryAfter}`] : []),
    'Connection: close',
  ];
  if (socket.writable) socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
  else socket.destroy();
}
