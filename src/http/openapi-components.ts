import type { FastifyInstance } from 'fastify';
import { webhookResourceComponents } from './operations/webhooks/webhook-resource-schemas.ts';
import { chatSchemaComponents } from './chat-schemas.ts';
import { contactSchemaComponents } from './contact-schemas.ts';
import { groupSchemaComponents } from './group-schemas.ts';
import { mediaComponent } from './media-schemas.ts';
import { messageSchemaComponents } from './message-schemas.ts';
import { messageReadSchemaComponents } from './operations/message-read-schemas.ts';
import { errorComponent } from './schemas.ts';
import { sendPolicySchemaComponents } from './send-policy-schemas.ts';
import { webhookSchemaComponents, webhooksSection } from './webhook-schemas.ts';

/**
 * The named models of the API, shared by every route that validates or answers them and
 * written once into the document's components.schemas (by @fastify/swagger, under their $id).
 */
export function registerSharedSchemas(app: FastifyInstance): void {
  const components = [
    errorComponent,
    mediaComponent,
    ...messageSchemaComponents,
    ...messageReadSchemaComponents,
    ...groupSchemaComponents,
    ...contactSchemaComponents,
    ...chatSchemaComponents,
    ...sendPolicySchemaComponents,
    ...webhookSchemaComponents,
    ...webhookResourceComponents,
  ];
  for (const component of components) app.addSchema(component);
}

/** What the document adds besides the routes: the webhooks, and the headers every answer carries. */
export const documentAdditions = {
  webhooks: webhooksSection(),
  headers: {
    RequestId: {
      description: "Names this request in the gateway's log; the same as an error's request_id. Sent on every answer.",
      schema: { type: 'string' },
    },
    RetryAfter: { description: 'Seconds to wait before trying again, when the gateway can tell.', schema: { type: 'integer', minimum: 0 } },
  },
} as const;

type Schema = Record<string, unknown>;
interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, Response>;
}
interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; headers?: Record<string, unknown>; responses?: Record<string, Response> };
}

/**
 * Finishes the document @fastify/swagger built: each operation's own request and answer
 * schemas become components named after it, so that /x and its /api/x alias reference one
 * definition rather than repeat it, and every answer declares the headers the gateway adds.
 */
export function finishDocument<T extends object>(document: T): T {
  const finished = document as Document;
  finished.components ??= {};
  finished.components.schemas ??= {};
  finished.components.responses ??= {};
  const schemas = finished.components.schemas;
  const responses = finished.components.responses;
  finished.components.headers = { ...finished.components.headers, ...documentAdditions.headers };
  for (const byMethod of Object.values(finished.paths ?? {})) {
    for (const operation of Object.values(byMethod)) {
      const base = operationBaseName(operation.operationId);
      for (const media of Object.values(operation.requestBody?.content ?? {})) hoist(schemas, media, `${base}Request`);
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        declareHeaders(status, response);
        // An error answer, its long list of codes included, is a response component of its own.
        if (Number(status) >= 400) shareResponse(responses, operation.responses!, status, `${base}Error${status}`);
        else
          for (const media of Object.values(response.content ?? {}))
            hoist(schemas, media, status === '200' || status === '201' ? `${base}Response` : `${base}Response${status}`);
      }
    }
  }
  return document;
}

/** `sendMessageApi` and `sendMessage` are one operation: SendMessage. */
function operationBaseName(operationId: string | undefined): string {
  const id = (operationId ?? 'operation').replace(/Api$/, '');
  return id[0]!.toUpperCase() + id.slice(1);
}

/** Moves an inline schema into components under the name, unless it is a reference or bytes already. */
function hoist(schemas: Record<string, Schema>, media: { schema?: Schema }, name: string): void {
  const schema = media.schema;
  if (schema === undefined || ('$ref' in schema && Object.keys(schema).length === 1) || schema.format === 'binary') return;
  const { description: _description, ...definition } = schema;
  const existing = schemas[name];
  if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(definition)) return;
  schemas[name] = definition;
  media.schema = { $ref: `#/components/schemas/${name}` };
}

/** Moves a response into components.responses under the name, when no other response holds it. */
function shareResponse(responses: Record<string, Response>, byStatus: Record<string, Response>, status: string, name: string): void {
  const response = byStatus[status]!;
  const existing = responses[name];
  if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(response)) return;
  responses[name] = response;
  byStatus[status] = { $ref: `#/components/responses/${name}` };
}

function declareHeaders(status: string, response: Response): void {
  const headers: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
  // A refusal for a rate or a busy gateway tells when to come back, and so does /health's 503: every 503 does.
  const refusal = Object.values(response.content ?? {}).some((media) => media.schema !== undefined && 'allOf' in media.schema);
  if (status === '503' || (status === '429' && refusal)) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
  response.headers = { ...response.headers, ...headers };
}
