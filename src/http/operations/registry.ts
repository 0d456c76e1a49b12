import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { apiKeyAuthHook, documentedScope, keyActor, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponsesFor } from './error-responses.ts';
import type { Answer, AnyOperation, OperationInput, RequestSchemas } from './operation.ts';
import type { OwnerDispatch } from './owner-dispatch.ts';
import { namedScope } from '../../web/named-scope.ts';
import { MAX_PREFER_WAIT_SECONDS } from '../schemas.ts';

/** What this module uses of the gateway's services (docs/adr/0061); the app hands it these. */
export type OperationRegistryServices = Pick<GatewayServices, 'authenticator'> & {
  /** The composition root's dispatch (src/main.ts), which the CLI uses too. */
  dispatch: OwnerDispatch;
};

/** Every endpoint is served at its path and again under /api, which older clients use. */
export const API_PREFIXES = ['', '/api'] as const;

/**
 * Serves the declared operations: each at both paths, behind the API key, with its account scope,
 * run on its number's owner when it has one. The /api alias is listed in the document as its own
 * operation, `<operationId>Api`, with the same schemas, so that every path a client may call is
 * described and operationIds stay unique.
 */
export async function registerOperations(
  app: FastifyInstance,
  gateway: OperationRegistryServices,
  operations: readonly AnyOperation[],
): Promise<void> {
  const { dispatch } = gateway;
  for (const prefix of API_PREFIXES) {
    await app.register(
      namedScope(`operations at '${prefix}/'`, async (scope) => {
        for (const operation of operations) {
          const onRequest = apiKeyAuthHook(gateway.authenticator, operation.scope, `${operation.method} ${prefix}${operation.path}`);
          scope.route(routeOf(operation, prefix, onRequest, dispatch));
        }
      }),
      { prefix },
    );
  }
}

function routeOf(operation: AnyOperation, prefix: string, onRequest: ReturnType<typeof apiKeyAuthHook>, dispatch: OwnerDispatch) {
  const { request } = operation;
  return {
    method: operation.method,
    url: operation.path,
    ...(prefix === '' && operation.unprefixedRouteOptions),
    onRequest,
    ...(request.body === undefined && { preValidation: operation.method === 'GET' ? refuseGetBody : refuseBodyFields }),
    schema: {
      operationId: prefix === '' ? operation.operationId : `${operation.operationId}Api`,
      summary: operation.summary,
      description: operation.description,
      tags: [operation.tag],
      ...documentedScope(operation.scope),
      ...(request.params !== undefined && { params: request.params }),
      querystring: request.query ?? NO_QUERY,
      ...(request.body !== undefined && { body: request.body }),
      ...(request.headers !== undefined && { headers: request.headers }),
      response: { ...operation.answers, ...errorResponsesFor(operation.errors) },
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => send(reply, await dispatch.run(operation, inputOf(request))),
  };
}

/**
 * The query string of an operation that reads none: a parameter is refused as an unknown body
 * field is, since `?send_at=…` on a send, or `?limit=5` where there is no limit, must not pass as
 * if it had been heard.
 */
const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} } as const;

/**
 * A GET has no body to read (Fastify does not parse one), so one sent is refused rather than
 * silently dropped: filters put in a body where the query string was meant would otherwise
 * answer an unfiltered list. An empty body (Content-Length: 0) is no body.
 */
export async function refuseGetBody(request: FastifyRequest): Promise<void> {
  const { 'content-length': length, 'transfer-encoding': coding } = request.headers;
  if (coding !== undefined || (length !== undefined && length !== '0'))
    throw new AppError(
      'invalid_request',
      `${request.method} ${request.routeOptions.url} takes no body; send its parameters in the query string.`,
      {
        field: 'body',
        problem: 'unknown',
      },
    );
}

/**
 * An operation that takes no body refuses one with fields, as every other refuses a field it does
 * not take: an option sent where there is none (a reason, a time) must not be silently ignored.
 * No body, an empty one or `{}` is fine.
 */
async function refuseBodyFields(request: FastifyRequest): Promise<void> {
  const { body } = request;
  if (body === undefined || body === null || typeof body !== 'object') return;
  const [field] = Object.keys(body);
  if (field !== undefined)
    throw new AppError('invalid_request', `The body field ${field} is not one this operation takes; it takes no body.`, {
      field,
      problem: 'unknown',
    });
}

function inputOf(request: FastifyRequest): OperationInput<RequestSchemas> {
  return {
    scope: keyScope(request),
    actor: keyActor(request),
    params: request.params,
    query: request.query,
    body: request.body,
    idempotencyKey: request.headers['idempotency-key'],
    preferWaitSeconds: preferredWaitSeconds(request.headers.prefer),
  };
}

/**
 * The `wait` preference of a Prefer header, in seconds; undefined without one (RFC 7240). Past
 * MAX_PREFER_WAIT_SECONDS it is refused rather than cut: a timer of 2^31 ms or more fires at once,
 * so `wait=3000000` once answered 202 at once, and a bound taken silently would be as surprising.
 */
function preferredWaitSeconds(header: string | string[] | undefined): number | undefined {
  const values = Array.isArray(header) ? header.join(',') : header;
  const match = values === undefined ? null : /(?:^|[,;\s])wait\s*=\s*"?(\d+)"?/i.exec(values);
  if (match === null) return undefined;
  const seconds = Number(match[1]);
  if (!(seconds <= MAX_PREFER_WAIT_SECONDS))
    throw new AppError(
      'invalid_request',
      `Prefer: wait=N takes at most ${MAX_PREFER_WAIT_SECONDS} seconds (a day); use wait: true to wait as long as it takes.`,
      {
        field: 'Prefer',
      },
    );
  return seconds;
}

/** Sends an operation's answer, made here or relayed from the owner, with its headers. */
export function send(reply: FastifyReply, answer: Answer): FastifyReply {
  if (answer.headers !== undefined) void reply.headers(answer.headers);
  return reply.status(answer.statusCode).send(answer.body);
}

/**
 * Whether a path is one of the operations' (either prefix), for refusing a keyless
 * `Expect: 100-continue` from the headers (plugins/early-refusals.ts). Paths the dashboard shares
 * without a key are not.
 */
export function keyedPathMatcher(operations: readonly AnyOperation[]): (path: string) => boolean {
  const patterns = operations.flatMap((operation) =>
    API_PREFIXES.filter((prefix) => prefix !== '' || operation.unprefixedRouteOptions === undefined).map(
      (prefix) => new RegExp(`^${prefix}${operation.path.replace(/:[a-z_]+/gi, '[^/]+')}$`),
    ),
  );
  return (path) => patterns.some((pattern) => pattern.test(path));
}
