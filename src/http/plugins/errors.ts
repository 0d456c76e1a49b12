import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, httpStatusFor, toEnvelope } from '../../domain/errors.ts';
import { isStorageOutage } from '../../store/outage-errors.ts';
import { loggableUrl } from './request-context.ts';
import { fromValidation } from './validation-errors.ts';

/**
 * The one place where failures become responses. Everything, from a thrown AppError to a
 * framework error or an unknown path, leaves as the documented envelope; 500s are masked and
 * carry the request id instead of a stack.
 */
export function registerErrorHandling(app: FastifyInstance, bodyLimitBytes: number): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const appError = withRetryAfter(toAppError(error, request, bodyLimitBytes));
    if (appError.code === 'internal_error') {
      request.log.error({ err: error }, 'request failed unexpectedly');
    } else if (appError.code === 'storage_unavailable' && !(error instanceof AppError)) {
      request.log.error({ err: error }, 'the store is unavailable; answered 503');
    }
    // A refusal that says when to come back says it in the header clients and proxies read too.
    const retryAfter = appError.meta?.retry_after_seconds;
    if (typeof retryAfter === 'number') void reply.header('Retry-After', String(retryAfter));
    void reply.status(httpStatusFor(appError.code)).send(toEnvelope(appError, request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(toEnvelope(notFound(request), request.id));
  });
}

/**
 * How long a 503 that names no time of its own asks a client to wait: a session between owners
 * or reconnecting (the sandbox network's reconnect loop waits at most 2 s) is back within it.
 */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * Every 503 says when to come back, in Retry-After and in meta.retry_after_seconds: a client that
 * honours it (as a load balancer or an HTTP library does) retries rather than failing.
 */
export function withRetryAfter(error: AppError): AppError {
  if (httpStatusFor(error.code) !== 503 || typeof error.meta?.retry_after_seconds === 'number') return error;
  return new AppError(error.code, error.message, { ...error.meta, retry_after_seconds: UNAVAILABLE_RETRY_AFTER_SECONDS });
}

/** The answer to any path or method no route serves; a refused internal call answers exactly so. */
export function notFound(request: FastifyRequest): AppError {
  return new AppError('not_found', `There is no ${request.method} ${request.url.split('?')[0]}; see /docs for the API.`);
}

/**
 * Fastify's own answer to a URL it cannot decode (a broken %-escape) bypasses the error handler;
 * given as the `frameworkErrors` option, this answers it in the envelope instead.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let appError: AppError;
  if (error.code === 'FST_ERR_BAD_URL') appError = new AppError('invalid_request', 'The URL is not valid: it holds a malformed %-escape.');
  else if (typeof error.statusCode === 'number' && error.statusCode < 500)
    appError = new AppError('invalid_request', `The request could not be read: ${error.message}`);
  else appError = new AppError('internal_error', 'Something went wrong on our side; the request_id names it in our log.');
  if (appError.code === 'internal_error') request.log.error({ err: error }, 'request failed unexpectedly');
  const status = httpStatusFor(appError.code);
  // No hook runs for such a request, so its one log line is written here.
  request.log.info({ method: request.method, url: loggableUrl(request.url), status }, 'request');
  void reply.header('X-Request-Id', request.id).status(status).send(toEnvelope(appError, request.id));
}

function toAppError(error: FastifyError | AppError, request: FastifyRequest, bodyLimitBytes: number): AppError {
  // On a path no route serves, the body cannot matter: whatever went wrong reading it, the
  // answer is the 404, as it is for a body that was read without fault.
  if (request.is404) return notFound(request);
  if (error instanceof AppError) return error;
  if (error.validation) return fromValidation(error);
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', `The request body is too large: the limit is ${bodyLimitBytes} bytes.`, {
        limit_bytes: bodyLimitBytes,
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError('invalid_request', 'The body must be JSON: send Content-Type: application/json.', { field: 'Content-Type' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The body is empty; a JSON object was expected.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'The Content-Length header does not match the body.');
  }
  // Other client errors the framework raises keep their status class but speak our envelope.
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError('invalid_request', `The request could not be read: ${error.message}`);
  }
  if (isStorageOutage(error)) return storageUnavailable();
  return new AppError('internal_error', 'Something went wrong on our side; the request_id names it in our log.');
}

/**
 * How long a client is asked to wait when the store is out: a restart of PostgreSQL takes
 * about a second, and a full disk needs a person, whom a client retrying every few seconds
 * does not burden.
 */
const STORAGE_RETRY_AFTER_SECONDS = 2;

function storageUnavailable(): AppError {
  return new AppError(
    'storage_unavailable',
    `The gateway's database cannot be reached or cannot write at the moment; nothing was stored. Try again in ` +
      `${STORAGE_RETRY_AFTER_SECONDS} s.`,
    {
      retry_after_seconds: STORAGE_RETRY_AFTER_SECONDS,
    },
  );
}
