import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { apiKeyScopes } from '../../../src/domain/api-key-scopes.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { documentChecker } from '../../support/documented-answers.ts';

/**
 * A field the gateway does not know is refused, never ignored: a client that adds `send_after`
 * (a typo of `send_at`) believing it schedules a message must not have it sent at once. The operations come from the
 * API document, so an operation added later is covered without touching this test.
 */

interface Schema {
  $ref?: string;
  oneOf?: Schema[];
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  examples?: unknown[];
  minimum?: number;
  minProperties?: number;
  additionalProperties?: unknown;
}
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: { content?: Record<string, { schema: Schema }> };
  security?: Record<string, string[]>[];
}
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** The document's named schemas, for resolving a `#/components/schemas/X` reference. */
let components: Record<string, Schema> = {};

/**
 * The schema itself, its reference followed; an "exactly one of" takes its first choice, so
 * that a sample is a sound request.
 */
function resolved(schema: Schema): Schema {
  if (schema.$ref !== undefined) return resolved(components[schema.$ref.replace('#/components/schemas/', '')]!);
  const [choice] = schema.oneOf ?? [];
  return choice === undefined ? schema : { ...schema, required: [...(schema.required ?? []), ...(choice.required ?? [])] };
}

const UNKNOWN = 'send_after';

/** /health is a probe without a key, not an operation: a monitor's cache-busting parameter is its business. */
const isProbe = (pathName: string) => pathName.replace(/^\/api/, '') === '/health';

/** A value the schema accepts as far as its types go; the gateway's own checks may still refuse it later. */
function sampleOf(referenced: Schema): unknown {
  const schema = resolved(referenced);
  const type = [schema.type ?? 'object'].flat()[0];
  if (schema.examples !== undefined) return schema.examples[0];
  if (schema.enum !== undefined) return schema.enum[0];
  switch (type) {
    case 'string':
      return 'x';
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return schema.items === undefined ? [] : [sampleOf(schema.items)];
    default: {
      // An update takes at least one field: the first it offers.
      const names = schema.required ?? (schema.minProperties ? Object.keys(schema.properties ?? {}).slice(0, 1) : []);
      return Object.fromEntries(names.map((name) => [name, sampleOf(schema.properties?.[name] ?? {})]));
    }
  }
}

/** The body with an unknown field at the top, and again inside each object it may hold, with the name each should be refused by. */
function bodiesWithUnknownFields(referenced: Schema): { body: Record<string, unknown>; field: string }[] {
  const schema = resolved(referenced);
  const sound = sampleOf(schema) as Record<string, unknown>;
  const cases: { body: Record<string, unknown>; field: string }[] = [
    { body: { ...sound, [UNKNOWN]: '2030-01-01T09:00:00Z' }, field: UNKNOWN },
  ];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const objectSchema = property.type === 'array' ? property.items && resolved(property.items) : resolved(property);
    if (objectSchema?.properties === undefined) continue;
    const nested = { ...(sampleOf(objectSchema) as object), [UNKNOWN]: 'x' };
    const value = property.type === 'array' ? [nested] : nested;
    cases.push({ body: { ...sound, [name]: value }, field: property.type === 'array' ? `${name}[0].${UNKNOWN}` : `${name}.${UNKNOWN}` });
  }
  return cases;
}

for (const dialect of dialects) {
  describe(`an unknown body field is refused on every operation of the document (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let document: Document;
    let operatorToken: string;
    /** The credential the operation's document entry asks for: an operator token, or the key. */
    const bearerFor = (operation: Operation) =>
      `Bearer ${operation.security?.some((scheme) => 'operatorToken' in scheme) ? operatorToken : account.apiKey}`;

    before(async () => {
      test = await startTestGateway(dialect);
      // Every scope, so that each operation reaches its input checks rather than stop at 403 missing_scope.
      account = await seedAccount(test.gateway, { numbers: 1, scopes: apiKeyScopes });
      operatorToken = (await test.gateway.operatorTokens.create('unknown fields')).plaintext;
      document = (await test.inject({ method: 'GET', url: '/openapi.json' })).json() as Document;
      components = document.components.schemas;
    });
    after(() => test?.close());

    it('every operation with a JSON body closes it, nested objects included, and answers 400 invalid_request naming the field', async () => {
      const withBodies = Object.entries(document.paths).flatMap(([pathName, byMethod]) =>
        Object.entries(byMethod).flatMap(([method, operation]) => {
          const schema = operation.requestBody?.content?.['application/json']?.schema;
          return schema === undefined
            ? []
            : [{ method: method.toUpperCase(), url: pathName.replace(/\{[^}]+\}/g, 'x'), schema, operation }];
        }),
      );
      // Thirteen today (the send, the sandbox's receive, the reaction, the edit, five of groups, the media link,
      // the number's settings, the check and the typing), each on both paths.
      assert.ok(withBodies.length >= 26, `the document lists the operations that take a body (${withBodies.length})`);
      for (const { method, url, schema, operation } of withBodies) {
        for (const { body, field } of bodiesWithUnknownFields(schema)) {
          const response = await test.inject({
            method: method as 'POST',
            url,
            headers: { authorization: bearerFor(operation) },
            payload: body,
          });
          const answer = response.json();
          const what = `${operation.operationId}: ${JSON.stringify(body)} -> ${response.body}`;
          assert.equal(response.statusCode, 400, what);
          assert.equal(answer.error, 'invalid_request', what);
          assert.deepEqual(answer.meta, { field, problem: 'unknown' }, what);
          assert.equal(answer.details, field, what);
        }
      }
    });

    /** Every operation of the document with a request its schemas accept, and the key. */
    const soundRequests = () =>
      Object.entries(document.paths).flatMap(([pathName, byMethod]) =>
        Object.entries(byMethod).map(([method, operation]) => {
          const content = Object.entries(operation.requestBody?.content ?? {})[0];
          const query = new URLSearchParams();
          for (const parameter of operation.parameters ?? [])
            if (parameter.in === 'query' && parameter.required) query.set(parameter.name, String(sampleOf(parameter.schema)));
          const headers: Record<string, string> = isProbe(pathName) ? {} : { authorization: bearerFor(operation) };
          if (content !== undefined) headers['content-type'] = content[0] === '*/*' ? 'application/octet-stream' : content[0];
          const payload =
            content === undefined ? undefined : content[0] === 'application/json' ? JSON.stringify(sampleOf(content[1].schema)) : 'bytes';
          return {
            method: method.toUpperCase() as 'POST' | 'GET' | 'PATCH' | 'DELETE',
            pathName,
            url: pathName.replace(/\{[^}]+\}/g, 'x'),
            query,
            headers,
            payload,
            operation,
          };
        }),
      );

    it('every operation refuses a query parameter it does not take, by name, as it refuses an unknown body field', async () => {
      const requests = soundRequests().filter(({ pathName }) => !isProbe(pathName));
      assert.ok(requests.length >= 100, `every operation, on both paths (${requests.length})`);
      for (const { method, url, query, headers, payload, operation } of requests) {
        query.set('zzz', '1');
        const response = await test.inject({ method, url: `${url}?${query}`, headers, ...(payload !== undefined && { payload }) });
        const what = `${operation.operationId}: ${method} ${url}?${query} -> ${response.body}`;
        assert.equal(response.statusCode, 400, what);
        assert.deepEqual([response.json().error, response.json().meta], ['invalid_request', { field: 'zzz', problem: 'unknown' }], what);
        assert.match(response.json().message, /query parameter zzz/, what);
      }
    });

    it('every GET refuses a body rather than ignore it, and takes an empty one', async () => {
      const gets = soundRequests().filter(({ method, pathName }) => method === 'GET' && !isProbe(pathName));
      assert.ok(gets.length >= 28, `the GETs, on both paths (${gets.length})`);
      for (const { url, query, headers, operation } of gets) {
        const withBody = await test.inject({
          method: 'GET',
          url: `${url}?${query}`,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: JSON.stringify({ limit: 1 }),
        });
        const what = `${operation.operationId}: GET ${url} with a body -> ${withBody.body}`;
        assert.deepEqual([withBody.statusCode, withBody.json().error, withBody.json().meta?.field], [400, 'invalid_request', 'body'], what);
        const empty = await test.inject({ method: 'GET', url: `${url}?${query}`, headers: { ...headers, 'content-length': '0' } });
        assert.notEqual(empty.json().meta?.field, 'body', `${operation.operationId}: an empty body is no body`);
      }
    });

    it("every operation's answers to these requests, refusals included, are ones the document gives it, in its schemas (Ajv 2020)", async () => {
      const check = documentChecker(document);
      const faults: string[] = [];
      const requests = soundRequests();
      for (const { method, pathName, url, query, headers, payload } of requests) {
        const tries = [
          // As sampled: placeholders the gateway refuses (404, 403, 400) or takes.
          { url: `${url}?${query}`, headers, payload },
          // Without the key, from a client that asks for JSON (a browser's /messages and /numbers are the dashboard's pages).
          { url: `${url}?${query}`, headers: { ...headers, authorization: undefined, accept: 'application/json' }, payload },
          // From a valid number that is not the account's.
          ...(query.has('from_phone')
            ? [{ url: `${url}?${new URLSearchParams({ ...Object.fromEntries(query), from_phone: '+14155550177' })}`, headers, payload }]
            : []),
          // A URL it cannot read (a malformed percent-escape).
          { url: `${url}?${query}&a=%ZZ`, headers, payload },
          // With a query parameter it does not take.
          { url: `${url}?${query}&zzz=1`, headers, payload },
          // A body it cannot read.
          ...(method === 'GET'
            ? []
            : [{ url: `${url}?${query}`, headers: { ...headers, 'content-type': 'application/json' }, payload: '{' }]),
        ];
        for (const attempt of tries) {
          if (isProbe(pathName) && attempt !== tries[0]) continue;
          const response = await test.inject({
            method,
            url: attempt.url,
            headers: Object.fromEntries(Object.entries(attempt.headers).filter(([, value]) => value !== undefined)) as Record<
              string,
              string
            >,
            ...(attempt.payload !== undefined && { payload: attempt.payload }),
          });
          const fault = check({
            method,
            path: pathName,
            status: response.statusCode,
            contentType: response.headers['content-type'] === undefined ? null : String(response.headers['content-type']),
            body: response.body,
          });
          if (fault !== undefined) faults.push(`${attempt.url}: ${fault}`);
        }
      }
      assert.ok(requests.length >= 100, `every operation, on both paths (${requests.length})`);
      assert.deepEqual(faults, []);
    });

    it('POST /send_message with a mistyped send_at ("send_after") sends nothing', async () => {
      const response = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', message: 'later', send_after: '2030-01-01T09:00:00Z' },
        account.apiKey,
      );
      assert.deepEqual([response.statusCode, response.json().error, response.json().details], [400, 'invalid_request', 'send_after']);
      const sent = await test.inject({
        method: 'GET',
        url: `/messages?phone=${encodeURIComponent(account.phones[0]!)}`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.deepEqual(sent.json().messages, []);
    });
  });
}
