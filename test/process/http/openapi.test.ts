import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { errorCatalogue, type ErrorCode } from '../../../src/domain/errors.ts';
import { webhookEventTypes } from '../../../src/domain/webhooks.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const REDOCLY = path.resolve('node_modules/.bin/redocly');

interface Operation {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  responses: Record<string, Response>;
}
interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: Schema }>;
}
type Schema = Record<string, unknown> & {
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
  oneOf?: Schema[];
  type?: unknown;
  enum?: unknown[];
};
type Document = {
  openapi: string;
  info: { license?: { name: string } };
  paths: Record<
    string,
    Record<
      string,
      Operation & {
        parameters?: { name: string; in: string; schema: Schema }[];
        requestBody?: { content: Record<string, { schema: Schema }> };
      }
    >
  >;
  components: { schemas: Record<string, Schema>; responses: Record<string, Response> };
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Schema }> } } }>;
};

/** The component a `#/components/schemas/X` reference names. */
function component(document: Document, schema: Schema | undefined): Schema {
  const name = schema?.$ref?.replace('#/components/schemas/', '');
  assert.ok(name !== undefined && document.components.schemas[name] !== undefined, `${JSON.stringify(schema)} references a component`);
  return document.components.schemas[name]!;
}

/** The response itself, and where it is written: an error answer is a response component. */
function responseOf(document: Document, response: Response, at: string[]): { response: Response; at: string[] } {
  const name = response.$ref?.replace('#/components/responses/', '');
  if (name === undefined) return { response, at };
  assert.ok(document.components.responses[name] !== undefined, `${response.$ref} exists`);
  return { response: document.components.responses[name]!, at: ['components', 'responses', name] };
}

/** A JSON pointer's escaping of one segment. */
function pointer(...segments: string[]): string {
  return segments.map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function operations(document: Document): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([pathName, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]) => [method, pathName, operation] as [string, string, Operation]),
  );
}

for (const dialect of dialects) {
  describe(`the OpenAPI document, and real answers checked against it (${dialect})`, () => {
    let test: TestGateway;
    let document: Document;
    let account: SeededAccount;
    // The whole document is one schema resource, so that its components resolve as they are written.
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats.default(ajv);

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_SANDBOX_RECEIVES_PER_MINUTE: '3', WAGW_BODY_LIMIT_BYTES: '2048' });
      document = (await test.inject({ method: 'GET', url: '/openapi.json' })).json() as Document;
      ajv.addSchema(document, 'openapi.json');
      account = await seedAccount(test.gateway, { numbers: 2 });
    });
    after(() => test?.close());

    /** Validates an answer against the operation's declared response for its status. */
    function assertDocumented(method: string, pathName: string, response: LightMyRequestResponse): void {
      const operation = document.paths[pathName]?.[method.toLowerCase()];
      assert.ok(operation !== undefined, `${method} ${pathName} is documented`);
      const written = operation.responses[String(response.statusCode)];
      assert.ok(written !== undefined, `${method} ${pathName} declares ${response.statusCode}: ${response.body}`);
      const declared = responseOf(document, written, ['paths', pathName, method.toLowerCase(), 'responses', String(response.statusCode)]);
      const schema = declared.response.content?.['application/json']?.schema;
      assert.ok(schema !== undefined, `${response.statusCode} of ${pathName} has a JSON schema`);
      const validate = ajv.compile({ $ref: `openapi.json#${pointer(...declared.at, 'content', 'application/json', 'schema')}` });
      assert.ok(
        validate(response.json()),
        `${method} ${pathName} ${response.statusCode}: ${ajv.errorsText(validate.errors)} in ${response.body}`,
      );
      if (response.statusCode >= 400) assertContractDetails(`${method} ${pathName}`, response.json());
    }

    /** The v0.1.0 contract's `details` is a string: checked on the answer itself, not only through the document. */
    function assertContractDetails(what: string, body: { details?: unknown; meta?: unknown }): void {
      assert.ok(
        body.details === undefined || typeof body.details === 'string',
        `${what}: details is absent or a string, not ${JSON.stringify(body.details)}`,
      );
      assert.ok(
        body.meta === undefined || (typeof body.meta === 'object' && body.meta !== null && !Array.isArray(body.meta)),
        `${what}: meta is an object`,
      );
    }

    it('describes the public API only: every operation has an id, a summary, an error status in the envelope, and /health needs no key', () => {
      assert.equal(document.openapi, '3.1.0');
      assert.equal(document.info.license?.name, 'MIT');
      const all = operations(document);
      assert.deepEqual(
        all.map(([method, pathName]) => `${method} ${pathName}`).sort(),
        [
          'get /api/media/{id}',
          'get /api/messages',
          'get /api/messages/{id}',
          'get /api/health',
          'get /api/numbers',
          'get /health',
          'get /media/{id}',
          'get /messages',
          'get /messages/{id}',
          'get /numbers',
          'post /api/check_numbers',
          'post /api/media',
          'post /api/media/{id}/link',
          'post /api/sandbox/receive',
          'post /api/send_message',
          'post /check_numbers',
          'post /media',
          'post /media/{id}/link',
          'post /sandbox/receive',
          'post /send_message',
          'post /api/typing',
          'post /typing',
          'post /send_reaction',
          'post /api/send_reaction',
          'post /messages/{id}/edit',
          'post /api/messages/{id}/edit',
          'post /messages/{id}/revoke',
          'post /api/messages/{id}/revoke',
          'post /messages/{id}/read',
          'post /api/messages/{id}/read',
          'patch /numbers/{id}',
          'patch /api/numbers/{id}',
          'post /numbers/{id}/pause',
          'post /api/numbers/{id}/pause',
          'post /numbers/{id}/resume',
          'post /api/numbers/{id}/resume',
          'post /sandbox/restrict',
          'post /api/sandbox/restrict',
          'post /sandbox/templates',
          'post /api/sandbox/templates',
          'post /sandbox/link_scan',
          'post /api/sandbox/link_scan',
          'post /messages/{id}/cancel',
          'post /api/messages/{id}/cancel',
          'get /numbers/{id}/queue',
          'get /api/numbers/{id}/queue',
          'delete /numbers/{id}/queue',
          'delete /api/numbers/{id}/queue',
          'get /account/send_policy',
          'get /api/account/send_policy',
          'get /webhooks',
          'get /api/webhooks',
          'post /webhooks',
          'post /api/webhooks',
          'get /webhooks/{id}',
          'get /api/webhooks/{id}',
          'patch /webhooks/{id}',
          'patch /api/webhooks/{id}',
          'delete /webhooks/{id}',
          'delete /api/webhooks/{id}',
          'post /webhooks/{id}/rotate_secret',
          'post /api/webhooks/{id}/rotate_secret',
          'post /webhooks/{id}/test',
          'post /api/webhooks/{id}/test',
          'get /webhooks/{id}/deliveries',
          'get /webhooks/{id}/stream',
          'get /api/webhooks/{id}/deliveries',
          'get /api/webhooks/{id}/stream',
          'post /webhooks/{id}/deliveries/{deliveryId}/redeliver',
          'post /api/webhooks/{id}/deliveries/{deliveryId}/redeliver',
          'patch /account/send_policy',
          'patch /api/account/send_policy',
          'post /groups',
          'post /api/groups',
          'get /groups',
          'get /api/groups',
          'get /groups/{id}',
          'get /api/groups/{id}',
          'patch /groups/{id}',
          'patch /api/groups/{id}',
          'post /groups/{id}/participants',
          'post /api/groups/{id}/participants',
          'get /groups/{id}/invite_link',
          'get /api/groups/{id}/invite_link',
          'post /groups/{id}/invite_link/revoke',
          'post /api/groups/{id}/invite_link/revoke',
          'post /groups/{id}/leave',
          'post /api/groups/{id}/leave',
          'get /contacts',
          'get /api/contacts',
          'get /contacts/{phone_or_lid}',
          'get /api/contacts/{phone_or_lid}',
          'get /chats',
          'get /api/chats',
          ...['archive', 'unarchive', 'pin', 'unpin', 'mute', 'unmute', 'mark_unread', 'mark_read'].flatMap((verb) => [
            `post /chats/{chat}/${verb}`,
            `post /api/chats/{chat}/${verb}`,
          ]),
          'post /sandbox/call',
          'post /api/sandbox/call',
          'post /presence/subscribe',
          'post /api/presence/subscribe',
          'get /presence/{phone_or_lid}',
          'get /api/presence/{phone_or_lid}',
          'get /contacts/{phone}/profile',
          'get /api/contacts/{phone}/profile',
          'patch /numbers/{id}/profile',
          'patch /api/numbers/{id}/profile',
          'post /blocklist',
          'post /api/blocklist',
          'delete /blocklist/{phone}',
          'delete /api/blocklist/{phone}',
          'get /blocklist',
          'get /api/blocklist',
          'get /new_chat_quota',
          'get /api/new_chat_quota',
          'get /templates',
          'get /api/templates',
          'get /templates/{name}',
          'get /api/templates/{name}',
          'post /sandbox/poll_vote',
          'post /api/sandbox/poll_vote',
          'patch /account/settings',
          'patch /api/account/settings',
          // The operator API, behind operator tokens (docs/operator-api.md).
          ...[
            'get /admin/accounts',
            'post /admin/accounts',
            'get /admin/accounts/{id}',
            'patch /admin/accounts/{id}',
            'get /admin/accounts/{id}/users',
            'post /admin/accounts/{id}/users',
            'get /admin/accounts/{id}/users/{user_id}',
            'patch /admin/accounts/{id}/users/{user_id}',
            'post /admin/accounts/{id}/users/{user_id}/reset_password',
            'delete /admin/accounts/{id}/users/{user_id}',
            'get /admin/accounts/{id}/numbers',
            'post /admin/accounts/{id}/numbers',
            'get /admin/accounts/{id}/numbers/{number_id}',
            'patch /admin/accounts/{id}/numbers/{number_id}',
            'post /admin/accounts/{id}/numbers/{number_id}/move',
            'post /admin/accounts/{id}/numbers/{number_id}/pause',
            'post /admin/accounts/{id}/numbers/{number_id}/resume',
            'delete /admin/accounts/{id}/numbers/{number_id}/queue',
            'post /admin/accounts/{id}/numbers/{number_id}/proxy',
            'delete /admin/accounts/{id}/numbers/{number_id}/proxy',
            'post /admin/accounts/{id}/numbers/{number_id}/cloud',
            'get /admin/accounts/{id}/numbers/{number_id}/cloud',
            'delete /admin/accounts/{id}/numbers/{number_id}/cloud',
            'delete /admin/accounts/{id}/numbers/{number_id}',
            'get /admin/accounts/{id}/api_keys',
            'post /admin/accounts/{id}/api_keys',
            'post /admin/api_keys/{id}/revoke',
            'get /admin/numbers/{id}/session',
            'post /admin/numbers/{id}/session/link',
            'post /admin/numbers/{id}/session/link/cancel',
            'post /admin/numbers/{id}/session/restart',
            'post /admin/numbers/{id}/session/logout',
            'get /admin/audit_events',
          ].flatMap((operation) => [operation, operation.replace(' /', ' /api/')]),
        ].sort(),
      );
      const ids = all.map(([, , operation]) => operation.operationId);
      assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
      for (const [method, pathName, operation] of all) {
        assert.ok(operation.operationId && operation.summary, `${method} ${pathName}`);
        // /health's 503 is its own {ok: false}, for monitors; its other errors are the envelope.
        const health = pathName.endsWith('/health');
        const errors = Object.entries(operation.responses).filter(([status]) => Number(status) >= 400 && !(health && status === '503'));
        assert.ok(errors.length > 0, `${method} ${pathName} declares its errors`);
        for (const [status, written] of errors) {
          const { response } = responseOf(document, written, []);
          assert.ok(written.$ref !== undefined, `${method} ${pathName} ${status} is a shared response`);
          const schema = response.content?.['application/json']?.schema ?? {};
          assert.equal(schema.allOf?.[0]?.$ref, '#/components/schemas/Error', `${pathName} ${status} is the envelope`);
          const codes = schema.allOf?.[1]?.properties?.error?.enum as ErrorCode[];
          for (const code of codes) {
            const entry: { status: number; publicApi?: boolean } = errorCatalogue[code];
            assert.deepEqual(
              [entry.status, entry.publicApi],
              [Number(status), true],
              `${method} ${pathName} ${status} lists ${code}, a public code of that status`,
            );
          }
          assert.ok(response.description?.includes('`'), `${pathName} ${status} lists its codes`);
        }
      }
      const envelope = document.components.schemas.Error!;
      assert.deepEqual(envelope.required, ['error', 'message', 'request_id']);
      assert.deepEqual(
        [envelope.properties?.details?.type, envelope.properties?.meta?.type],
        ['string', 'object'],
        'details is a string, meta an object',
      );
      for (const health of ['/health', '/api/health']) {
        assert.deepEqual(
          Object.keys(document.paths[health]!.get!.responses).sort(),
          ['200', '400', '503'],
          `${health} declares 400 for a URL it cannot read, its only input`,
        );
        assert.deepEqual(document.paths[health]!.get!.security, []);
      }
    });

    it('names its models and every webhook event as components, with the webhooks section pointing at them', () => {
      const schemas = document.components.schemas;
      for (const name of [
        'Message',
        'MessageDetail',
        'SentMessage',
        'ReceivedMessage',
        'Media',
        'Group',
        'GroupSummary',
        'Participant',
        'Error',
      ])
        assert.ok(schemas[name], `components.schemas.${name}`);
      assert.equal(component(document, schemas.Group!.properties?.participants?.items as Schema), schemas.Participant);
      const events = [...webhookEventTypes, 'message.media', 'test'];
      assert.deepEqual(Object.keys(document.webhooks).sort(), [...events].sort());
      for (const event of events) {
        const payload = component(document, document.webhooks[event]!.post.requestBody.content['application/json']!.schema);
        assert.deepEqual(payload.properties?.event?.enum, [event], `${event}'s payload names it`);
        assert.ok(payload.required?.includes('webhook_id'), `${event} carries webhook_id`);
      }
      const data = schemas.MessageEvent!.properties?.data;
      assert.deepEqual(
        [data?.required, Object.keys(data?.properties ?? {}).slice(0, 3)],
        [
          ['from', 'message', 'timestamp'],
          ['from', 'message', 'timestamp'],
        ],
        'the nested data shape is described',
      );
    });

    it('an /api alias references the same schemas as its path, and repeats none', () => {
      const all = operations(document);
      for (const [method, pathName, operation] of all.filter(([, pathName]) => pathName.startsWith('/api/'))) {
        const primary = document.paths[pathName.slice(4)]?.[method];
        assert.ok(primary !== undefined, `${pathName} aliases ${pathName.slice(4)}`);
        const schemasOf = (of: typeof primary): Schema[] => [
          ...Object.values(of.requestBody?.content ?? {}).map((media) => media.schema),
          ...Object.values(of.responses).flatMap((response) =>
            response.$ref !== undefined ? [{ $ref: response.$ref }] : Object.values(response.content ?? {}).map((media) => media.schema),
          ),
        ];
        for (const schema of schemasOf(operation)) {
          assert.ok(
            schema.$ref !== undefined || schema.format === 'binary',
            `${method} ${pathName}: ${JSON.stringify(schema).slice(0, 80)} is a reference, not a copy`,
          );
        }
        assert.deepEqual(schemasOf(operation), schemasOf(primary), `${method} ${pathName} and its path share their schemas`);
      }
    });

    it('types what it can: integers, enums, times, exactly one recipient, bodies and headers', () => {
      const list = document.paths['/messages']!.get!.parameters!;
      const query = (name: string) => list.find((parameter) => parameter.name === name)?.schema;
      assert.deepEqual(
        [query('limit')?.type, query('direction')?.enum, query('since')?.format, query('until')?.format],
        ['integer', ['outbound', 'inbound'], 'date-time', 'date-time'],
      );
      assert.ok(query('status')?.enum?.includes('delivered'));
      const send = document.components.schemas.SendMessageRequest!;
      assert.deepEqual(
        send.oneOf?.map((branch) => branch.required),
        [['to_phone'], ['to_group']],
      );
      assert.equal(
        document.components.schemas.DirectSentMessage!.properties?.to_phone?.type,
        'string',
        'a direct send names its recipient',
      );
      const upload = document.paths['/media']!.post!.requestBody?.content ?? {};
      assert.deepEqual(Object.keys(upload), ['application/octet-stream', '*/*']);
      const download = document.paths['/media/{id}']!.get!.parameters!.filter((parameter) => parameter.in === 'header').map(
        (parameter) => parameter.name,
      );
      assert.deepEqual(download.sort(), ['if-none-match', 'if-range', 'range']);
      const sendOperation = document.paths['/send_message']!.post!;
      assert.ok(sendOperation.parameters?.some((parameter) => parameter.name === 'idempotency-key' && parameter.in === 'header'));
      const sendHeaders = (status: string) =>
        Object.keys(responseOf(document, sendOperation.responses[status]!, []).response.headers ?? {});
      assert.deepEqual(sendHeaders('200').sort(), ['Idempotent-Replayed', 'X-Request-Id']);
      assert.deepEqual(
        [sendHeaders('429').sort(), sendHeaders('503').sort()],
        [
          ['Retry-After', 'X-Request-Id'],
          ['Retry-After', 'X-Request-Id'],
        ],
      );
      for (const [method, pathName, operation] of operations(document)) {
        for (const [status, written] of Object.entries(operation.responses)) {
          assert.ok(
            'X-Request-Id' in (responseOf(document, written, []).response.headers ?? {}),
            `${method} ${pathName} ${status} declares X-Request-Id`,
          );
        }
      }
    });

    it("passes Redocly's recommended rules with no error and no warning", () => {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-openapi-')), 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(document));
      const lint = spawnSync(REDOCLY, ['lint', '--extends=recommended', '--format=json', file], { encoding: 'utf8' });
      const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as {
        problems: { ruleId: string; location: { pointer: string }[] }[];
      };
      assert.deepEqual(report.problems, []);
    });

    it('real successes and errors of every operation match their documented schemas (Ajv 2020)', async () => {
      const [from, other] = account.phones as [string, string];
      const send = (url: string, body: unknown, key: string | undefined = account.apiKey, headers: Record<string, string> = {}) =>
        test.post(url, body, key, headers);
      for (const url of ['/send_message', '/api/send_message']) {
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'hi' }));
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '0415', message: 'hi' }));
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'hi' }, undefined));
        assertDocumented('POST', url, await send(url, { from_phone: '+14155550177', to_phone: '+14155550100', message: 'hi' }));
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'x'.repeat(4096) }));
        const keyed = { 'idempotency-key': `openapi-${url}` };
        assertDocumented(
          'POST',
          url,
          await send(url, { from_phone: from, to_phone: '+14155550100', message: 'once' }, account.apiKey, keyed),
        );
        assertDocumented(
          'POST',
          url,
          await send(url, { from_phone: from, to_phone: '+14155550100', message: 'changed' }, account.apiKey, keyed),
        );
      }
      // A chat between the account's two numbers: a message sent, and the same received.
      const sent = (await send('/send_message', { from_phone: other, to_phone: from, message: 'to react to' })).json();
      const received = (
        await test.inject({
          method: 'GET',
          url: `/api/messages?phone=${encodeURIComponent(from)}&direction=inbound&limit=1`,
          headers: { authorization: `Bearer ${account.apiKey}` },
        })
      ).json().messages[0];
      assert.equal(received.message, 'to react to');
      for (const prefix of ['', '/api']) {
        assertDocumented(
          'POST',
          `${prefix}/send_reaction`,
          await send(`${prefix}/send_reaction`, { from_phone: from, message_id: received.message_id, emoji: '👍' }),
        );
        assertDocumented(
          'POST',
          `${prefix}/send_reaction`,
          await send(`${prefix}/send_reaction`, { from_phone: from, message_id: received.message_id, emoji: 'no' }),
        );
        assertDocumented(
          'POST',
          `${prefix}/messages/{id}/edit`,
          await send(`${prefix}/messages/${sent.message_id}/edit`, { message: `edited${prefix}` }),
        );
        assertDocumented(
          'POST',
          `${prefix}/messages/{id}/edit`,
          await send(`${prefix}/messages/${received.message_id}/edit`, { message: 'not mine' }),
        );
        assertDocumented('POST', `${prefix}/messages/{id}/read`, await send(`${prefix}/messages/${received.message_id}/read`, {}));
        assertDocumented('POST', `${prefix}/messages/{id}/read`, await send(`${prefix}/messages/${sent.message_id}/read`, {}));
        assertDocumented(
          'GET',
          `${prefix}/messages/{id}`,
          await test.inject({
            method: 'GET',
            url: `${prefix}/messages/${sent.message_id}`,
            headers: { authorization: `Bearer ${account.apiKey}` },
          }),
        );
        const patch = (number: string) =>
          test.inject({
            method: 'PATCH',
            url: `${prefix}/numbers/${encodeURIComponent(number)}`,
            headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
            payload: '{"auto_read":false}',
          });
        assertDocumented('PATCH', `${prefix}/numbers/{id}`, await patch(from));
        assertDocumented('PATCH', `${prefix}/numbers/{id}`, await patch('+14155550177'));
      }
      for (const prefix of ['', '/api']) {
        const created = await send(`${prefix}/groups`, { from_phone: from, subject: 'Documented', participants: [other] });
        assertDocumented('POST', `${prefix}/groups`, created);
        assertDocumented(
          'POST',
          `${prefix}/send_message`,
          await send(`${prefix}/send_message`, { from_phone: from, to_group: created.json().id, message: 'to the group' }),
        );
        assertDocumented(
          'POST',
          `${prefix}/groups`,
          await send(`${prefix}/groups`, { from_phone: from, subject: '', participants: [other] }),
        );
        const read = (url: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${account.apiKey}` } });
        assertDocumented('GET', `${prefix}/groups`, await read(`${prefix}/groups?from_phone=${encodeURIComponent(from)}`));
        assertDocumented('GET', `${prefix}/groups`, await read(`${prefix}/groups`));
        assertDocumented(
          'GET',
          `${prefix}/groups/{id}`,
          await read(`${prefix}/groups/${encodeURIComponent(created.json().id)}?from_phone=${encodeURIComponent(other)}`),
        );
        assertDocumented(
          'GET',
          `${prefix}/groups/{id}`,
          await read(`${prefix}/groups/120363000000000000%40g.us?from_phone=${encodeURIComponent(from)}`),
        );
        const groupUrl = `${prefix}/groups/${encodeURIComponent(created.json().id)}`;
        assertDocumented(
          'POST',
          `${prefix}/groups/{id}/participants`,
          await send(`${groupUrl}/participants`, { from_phone: from, action: 'add', participants: ['+14155550403', other] }),
        );
        assertDocumented(
          'POST',
          `${prefix}/groups/{id}/participants`,
          await send(`${groupUrl}/participants`, { from_phone: other, action: 'remove', participants: [from] }),
        );
        const patched = await test.inject({
          method: 'PATCH',
          url: groupUrl,
          headers: { authorization: `Bearer ${account.apiKey}` },
          payload: { from_phone: from, description: 'documented' },
        });
        assertDocumented('PATCH', `${prefix}/groups/{id}`, patched);
        assertDocumented(
          'GET',
          `${prefix}/groups/{id}/invite_link`,
          await read(`${groupUrl}/invite_link?from_phone=${encodeURIComponent(from)}`),
        );
        assertDocumented(
          'POST',
          `${prefix}/groups/{id}/invite_link/revoke`,
          await send(`${groupUrl}/invite_link/revoke`, { from_phone: from }),
        );
        assertDocumented('POST', `${prefix}/groups/{id}/leave`, await send(`${groupUrl}/leave`, { from_phone: other }));
        assertDocumented('POST', `${prefix}/groups/{id}/leave`, await send(`${groupUrl}/leave`, { from_phone: other }));
      }
      assertDocumented('POST', '/messages/{id}/revoke', await send(`/messages/${sent.message_id}/revoke`, {}));
      assertDocumented('POST', '/api/messages/{id}/revoke', await send(`/api/messages/${sent.message_id}/revoke`, {}));
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), other, 'disconnected');
      assertDocumented(
        'POST',
        '/send_message',
        await send('/send_message', { from_phone: other, to_phone: '+14155550100', message: 'hi' }),
      );
      const broke = await seedAccount(test.gateway, { monthlyLimit: 0 });
      assertDocumented(
        'POST',
        '/send_message',
        await send('/send_message', { from_phone: broke.phones[0], to_phone: '+14155550100', message: 'hi' }, broke.apiKey),
      );
      for (const url of ['/sandbox/receive', '/api/sandbox/receive']) {
        assertDocumented('POST', url, await send(url, { from_phone: '+14155550100', to_phone: from, message: 'in' }));
        assertDocumented('POST', url, await send(url, { from_phone: '+14155550100', to_phone: '+14155550177', message: 'in' }));
      }
      // The account's third simulated message this minute is its last; the next is refused.
      assertDocumented(
        'POST',
        '/sandbox/receive',
        await send('/sandbox/receive', { from_phone: '+14155550100', to_phone: from, message: 'in' }),
      );
      assertDocumented(
        'POST',
        '/sandbox/receive',
        await send('/sandbox/receive', { from_phone: '+14155550100', to_phone: from, message: 'in' }),
      );
      assertDocumented('GET', '/health', await test.inject({ method: 'GET', url: '/health' }));
      assertDocumented('GET', '/api/health', await test.inject({ method: 'GET', url: '/api/health' }));
      assertDocumented('GET', '/health', await test.inject({ method: 'GET', url: '/health?a=%ZZ' }));
    });
  });
}
