import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditActor } from '../../domain/audit.ts';
import type { ErrorCode } from '../../domain/errors.ts';
import type { OperatorScope } from '../../domain/tenant-scope.ts';
import type { Gateway } from '../../main.ts';
import { errorResponsesFor } from '../operations/error-responses.ts';
import type { Answer } from '../operations/operation.ts';
import { API_PREFIXES, refuseGetBody, send } from '../operations/registry.ts';
import { namedScope } from '../plugins/named-scope.ts';
import { OPERATOR_ERRORS, OPERATOR_SECURITY, operatorActor, operatorAuthHook, tokenScope } from './operator-auth.ts';

/**
 * One operation of the operator API (docs/operator-api.md), declared once as the public API's
 * are: served at /admin/x and /api/admin/x behind an operator token, documented under the
 * `operator` tag with the errors it lists, and given the operator's scope and the token as the
 * actor of its audit rows.
 */
interface OperatorOperation<Query extends JSONSchema> {
  method: 'GET';
  /** Fastify's form, under /admin. */
  path: `/admin/${string}`;
  operationId: string;
  summary: string;
  description: string;
  query: Query;
  answers: Readonly<Record<number, object>>;
  errors: readonly ErrorCode[];
  handle(input: { scope: OperatorScope; actor: AuditActor; query: FromSchema<Query> }, gateway: Gateway): Promise<Answer>;
}

type AnyOperatorOperation = OperatorOperation<JSONSchema>;

/**
 * Declares an operator operation in two steps, as defineOperation does (operations/operation.ts):
 * the query's schema first, so that the handler's input is typed from it without inference.
 */
export function defineOperatorOperation<const Query extends JSONSchema>(query: Query) {
  return (operation: Omit<OperatorOperation<Query>, 'query'>): AnyOperatorOperation =>
    ({ ...operation, query }) as unknown as AnyOperatorOperation;
}

/** Serves the operator operations at both prefixes, each behind the operator token. */
export async function registerOperatorOperations(
  app: FastifyInstance,
  gateway: Gateway,
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
            preValidation: refuseGetBody,
            schema: {
              operationId: prefix === '' ? operation.operationId : `${operation.operationId}Api`,
              summary: operation.summary,
              description: operation.description,
              tags: ['operator'],
              ...OPERATOR_SECURITY,
              querystring: operation.query,
              response: { ...operation.answers, ...errorResponsesFor([...OPERATOR_ERRORS, 'invalid_request', ...operation.errors]) },
            },
            handler: async (request: FastifyRequest, reply: FastifyReply) =>
              send(
                reply,
                await operation.handle(
                  { scope: tokenScope(request), actor: operatorActor(request), query: request.query as FromSchema<JSONSchema> },
                  gateway,
                ),
              ),
          });
      }),
      { prefix },
    );
  }
}
