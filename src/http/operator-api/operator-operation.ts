import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditActor } from '../../domain/audit.ts';
import type { ErrorCode } from '../../domain/errors.ts';
import type { OperatorScope } from '../../domain/tenant-scope.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { errorResponsesFor, REQUEST_ERRORS } from '../operations/error-responses.ts';
import type { Answer } from '../operations/operation.ts';
import { API_PREFIXES, refuseGetBody, send } from '../operations/registry.ts';
import { namedScope } from '../../web/named-scope.ts';
import { OPERATOR_ERRORS, OPERATOR_SECURITY, operatorActor, operatorAuthHook, tokenScope } from './operator-auth.ts';

/** The services operator operations' handlers reach (docs/adr/0061); a new one is named here. */
export type OperatorServices = Pick<
  GatewayServices,
  'accounts' | 'apiKeys' | 'audit' | 'cloudNumbers' | 'numbers' | 'numberControl' | 'pauses' | 'store' | 'team'
>;

/** What registering them uses: the handlers' services and the tokens that admit their callers. */
type Services = OperatorServices & Pick<GatewayServices, 'operatorTokens'>;

/** The parts of a request an operator operation reads, each described by a JSON schema. */
interface OperatorRequest {
  params?: JSONSchema;
  query?: JSONSchema;
  body?: JSONSchema;
}

type Part<Request extends OperatorRequest, Name extends keyof OperatorRequest> = Request[Name] extends JSONSchema
  ? FromSchema<Request[Name]>
  : undefined;

interface OperatorInput<Request extends OperatorRequest> {
  scope: OperatorScope;
  actor: AuditActor;
  params: Part<Request, 'params'>;
  query: Part<Request, 'query'>;
  body: Part<Request, 'body'>;
}

/**
 * One operation of the operator API (docs/operator-api.md), declared once as the public API's
 * are: served at /admin/x and /api/admin/x behind an operator token, documented under the
 * `operator` tag with the errors it lists, and given the operator's scope and the token as the
 * actor of its audit rows.
 */
interface OperatorOperation<Request extends OperatorRequest> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Fastify's form, under /admin. */
  path: `/admin/${string}`;
  operationId: string;
  summary: string;
  description: string;
  request: Request;
  answers: Readonly<Record<number, object>>;
  errors: readonly ErrorCode[];
  handle(input: OperatorInput<Request>, gateway: OperatorServices): Promise<Answer>;
}

type AnyOperatorOperation = OperatorOperation<OperatorRequest>;

/**
 * Declares an operator operation in two steps, as defineOperation does (operations/operation.ts):
 * the request's schemas first, so that the handler's input is typed from them without inference.
 */
export function defineOperatorOperation<const Request extends OperatorRequest>(request: Request) {
  return (operation: Omit<OperatorOperation<Request>, 'request'>): AnyOperatorOperation =>
    ({ ...operation, request }) as unknown as AnyOperatorOperation;
}

/** A query string of an operation that reads none: a parameter is refused, never ignored. */
const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} } as const;

function takesNoBody(operation: AnyOperatorOperation): boolean {
  return operation.method === 'GET' || operation.method === 'DELETE';
}

/** Serves the operator operations at both prefixes, each behind the operator token. */
export async function registerOperatorOperations(
  app: FastifyInstance,
  gateway: Services,
  operations: readonly AnyOperatorOperation[],
): Promise<void> {
  app.decorateRequest('operatorToken', null);
  const onRequest = operatorAuthHook(gateway.operatorTokens);
  for (const prefix of API_PREFIXES) {
    await app.register(
      namedScope(`operator operations at '${prefix}/admin'`, async (scope) => {
        for (const operation of operations)
          scope.route({
            method: operation.method,
            url: operation.path,
            onRequest,
            // A GET or a DELETE takes no body: one sent is refused, not dropped (registry.ts says why).
            ...(takesNoBody(operation) && { preValidation: refuseGetBody }),
            schema: {
              operationId: prefix === '' ? operation.operationId : `${operation.operationId}Api`,
              summary: operation.summary,
              description: operation.description,
              tags: ['operator'],
              ...OPERATOR_SECURITY,
              ...(operation.request.params !== undefined && { params: operation.request.params }),
              querystring: operation.request.query ?? NO_QUERY,
              ...(operation.request.body !== undefined && { body: operation.request.body }),
              response: {
                ...operation.answers,
                ...errorResponsesFor([
                  ...OPERATOR_ERRORS,
                  // A DELETE's body is still read (and refused), so it can be malformed or too large.
                  ...(operation.method === 'GET' ? (['invalid_request'] as const) : REQUEST_ERRORS),
                  ...operation.errors,
                ]),
              },
            },
            handler: async (request: FastifyRequest, reply: FastifyReply) =>
              send(
                reply,
                await operation.handle(
                  {
                    scope: tokenScope(request),
                    actor: operatorActor(request),
                    params: request.params as never,
                    query: request.query as never,
                    body: request.body as never,
                  },
                  gateway,
                ),
              ),
          });
      }),
      { prefix },
    );
  }
}
