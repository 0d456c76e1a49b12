import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { operatorScope } from '../../src/domain/tenant-scope.ts';
import { dialects } from '../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../support/gateway.ts';

const REDOCLY = path.resolve('node_modules/.bin/redocly');

interface Operation {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  responses: Record<string, { description?: string; content?: Record<string, { schema: object }> }>;
}
type Document = { openapi: string; info: { license?: { name: string } }; paths: Record<string, Record<string, Operation>> };

function operations(document: Document): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([pathName, byMethod]) => Object.entries(byMethod).map(([method, operation]) => [method, pathName, operation] as [string, string, Operation]));
}

for (const dialect of dialects) {
  describe(`the OpenAPI document, and real answers checked against it (${dialect})`, () => {
    let test: TestGateway;
    let document: Document;
    let account: SeededAccount;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_SANDBOX_RECEIVES_PER_MINUTE: '3', WAGW_BODY_LIMIT_BYTES: '2048' });
      document = (await test.inject({ method: 'GET', url: '/openapi.json' })).json() as Document;
      account = await seedAccount(test.gateway, { numbers: 2 });
    });
    after(() => test?.close());

    /** Validates an answer against the operation's declared response for its status. */
    function assertDocumented(method: string, pathName: string, response: LightMyRequestResponse): void {
      const operation = document.paths[pathName]?.[method.toLowerCase()];
      assert.ok(operation !== undefined, `${method} ${pathName} is documented`);
      const declared = operation.responses[String(response.statusCode)];
      assert.ok(declared !== undefined, `${method} ${pathName} declares ${response.statusCode}: ${response.body}`);
      const schema = declared.content?.['application/json']?.schema;
      assert.ok(schema !== undefined, `${response.statusCode} of ${pathName} has a JSON schema`);
      const validate = ajv.compile(schema);
      assert.ok(validate(response.json()), `${method} ${pathName} ${response.statusCode}: ${ajv.errorsText(validate.errors)} in ${response.body}`);
      if (response.statusCode >= 400) assertContractDetails(`${method} ${pathName}`, response.json());
    }

    /** The v0.1.0 contract's `details` is a string: checked on the answer itself, not only through the document. */
    function assertContractDetails(what: string, body: { details?: unknown; meta?: unknown }): void {
      assert.ok(body.details === undefined || typeof body.details === 'string', `${what}: details is absent or a string, not ${JSON.stringify(body.details)}`);
      assert.ok(body.meta === undefined || (typeof body.meta === 'object' && body.meta !== null && !Array.isArray(body.meta)), `${what}: meta is an object`);
    }

    it('describes the public API only: every operation has an id, a summary, an error status in the envelope, and /health needs no key', () => {
      assert.equal(document.openapi, '3.1.0');
      assert.equal(document.info.license?.name, 'MIT');
      const all = operations(document);
      assert.deepEqual(all.map(([method, pathName]) => `${method} ${pathName}`).sort(), [
        'get /api/media/{id}', 'get /api/messages', 'get /api/messages/{id}', 'get /api/numbers', 'get /health', 'get /media/{id}', 'get /messages',
        'get /messages/{id}', 'get /numbers', 'post /api/check_numbers', 'post /api/media', 'post /api/media/{id}/link', 'post /api/sandbox/receive',
        'post /api/send_message', 'post /check_numbers', 'post /media', 'post /media/{id}/link', 'post /sandbox/receive', 'post /send_message',
        'post /api/typing', 'post /typing', 'post /send_reaction', 'post /api/send_reaction', 'post /messages/{id}/edit', 'post /api/messages/{id}/edit',
        'post /messages/{id}/revoke', 'post /api/messages/{id}/revoke', 'post /messages/{id}/read', 'post /api/messages/{id}/read',
        'patch /numbers/{id}', 'patch /api/numbers/{id}',
        'post /groups', 'post /api/groups', 'get /groups', 'get /api/groups', 'get /groups/{id}', 'get /api/groups/{id}',
        'patch /groups/{id}', 'patch /api/groups/{id}', 'post /groups/{id}/participants', 'post /api/groups/{id}/participants',
        'get /groups/{id}/invite_link', 'get /api/groups/{id}/invite_link', 'post /groups/{id}/invite_link/revoke', 'post /api/groups/{id}/invite_link/revoke',
        'post /groups/{id}/leave', 'post /api/groups/{id}/leave',
      ].sort());
      const ids = all.map(([, , operation]) => operation.operationId);
      assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
      for (const [method, pathName, operation] of all) {
        assert.ok(operation.operationId && operation.summary, `${method} ${pathName}`);
        const errors = Object.entries(operation.responses).filter(([status]) => Number(status) >= 400 && Number(status) !== 503 || (Number(status) === 503 && pathName !== '/health'));
        assert.ok(errors.length > 0, `${method} ${pathName} declares its errors`);
        for (const [status, response] of errors) {
          const schema = response.content?.['application/json']?.schema as { required?: string[] } | undefined;
          assert.deepEqual(schema?.required, ['error', 'message', 'request_id'], `${pathName} ${status} is the envelope`);
          const envelope = schema as { properties?: Record<string, { type?: unknown }> };
          assert.deepEqual([envelope.properties?.details?.type, envelope.properties?.meta?.type], ['string', 'object'], `${pathName} ${status}: details is a string, meta an object`);
          assert.ok(response.description !== undefined && response.description.includes('`'), `${pathName} ${status} lists its codes`);
        }
      }
      assert.deepEqual(document.paths['/health']!.get!.security, []);
    });

    it("passes Redocly's recommended rules with no error and no warning", () => {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-openapi-')), 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(document));
      const lint = spawnSync(REDOCLY, ['lint', '--extends=recommended', '--format=json', file], { encoding: 'utf8' });
      const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: unknown[] };
      assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 }, JSON.stringify(report.problems, null, 2));
      assert.equal(lint.status, 0);
    });

    it('real successes and errors of every operation match their documented schemas (Ajv 2020)', async () => {
      const [from, other] = account.phones as [string, string];
      const send = (url: string, body: unknown, key: string | undefined = account.apiKey, headers: Record<string, string> = {}) => test.post(url, body, key, headers);
      for (const url of ['/send_message', '/api/send_message']) {
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'hi' }));
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '0415', message: 'hi' }));
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'hi' }, undefined));
        assertDocumented('POST', url, await send(url, { from_phone: '+14155550177', to_phone: '+14155550100', message: 'hi' }));
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'x'.repeat(4096) }));
        const keyed = { 'idempotency-key': `openapi-${url}` };
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'once' }, account.apiKey, keyed));
        assertDocumented('POST', url, await send(url, { from_phone: from, to_phone: '+14155550100', message: 'changed' }, account.apiKey, keyed));
      }
      // A chat between the account's two numbers: a message sent, and the same received.
      const sent = (await send('/send_message', { from_phone: other, to_phone: from, message: 'to react to' })).json();
      const received = (await test.inject({ method: 'GET', url: `/api/messages?phone=${encodeURIComponent(from)}&direction=inbound&limit=1`, headers: { authorization: `Bearer ${account.apiKey}` } })).json().messages[0];
      assert.equal(received.message, 'to react to');
      for (const prefix of ['', '/api']) {
        assertDocumented('POST', `${prefix}/send_reaction`, await send(`${prefix}/send_reaction`, { from_phone: from, message_id: received.message_id, emoji: '👍' }));
        assertDocumented('POST', `${prefix}/send_reaction`, await send(`${prefix}/send_reaction`, { from_phone: from, message_id: received.message_id, emoji: 'no' }));
        assertDocumented('POST', `${prefix}/messages/{id}/edit`, await send(`${prefix}/messages/${sent.message_id}/edit`, { message: `edited${prefix}` }));
        assertDocumented('POST', `${prefix}/messages/{id}/edit`, await send(`${prefix}/messages/${received.message_id}/edit`, { message: 'not mine' }));
        assertDocumented('POST', `${prefix}/messages/{id}/read`, await send(`${prefix}/messages/${received.message_id}/read`, {}));
        assertDocumented('POST', `${prefix}/messages/{id}/read`, await send(`${prefix}/messages/${sent.message_id}/read`, {}));
        assertDocumented('GET', `${prefix}/messages/{id}`, await test.inject({ method: 'GET', url: `${prefix}/messages/${sent.message_id}`, headers: { authorization: `Bearer ${account.apiKey}` } }));
        const patch = (number: string) =>
          test.inject({ method: 'PATCH', url: `${prefix}/numbers/${encodeURIComponent(number)}`, headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' }, payload: '{"auto_read":false}' });
        assertDocumented('PATCH', `${prefix}/numbers/{id}`, await patch(from));
        assertDocumented('PATCH', `${prefix}/numbers/{id}`, await patch('+14155550177'));
      }
      for (const prefix of ['', '/api']) {
        const created = await send(`${prefix}/groups`, { from_phone: from, subject: 'Documented', participants: [other] });
        assertDocumented('POST', `${prefix}/groups`, created);
        assertDocumented('POST', `${prefix}/groups`, await send(`${prefix}/groups`, { from_phone: from, subject: '', participants: [other] }));
        const read = (url: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${account.apiKey}` } });
        assertDocumented('GET', `${prefix}/groups`, await read(`${prefix}/groups?from_phone=${encodeURIComponent(from)}`));
        assertDocumented('GET', `${prefix}/groups`, await read(`${prefix}/groups`));
        assertDocumented('GET', `${prefix}/groups/{id}`, await read(`${prefix}/groups/${encodeURIComponent(created.json().id)}?from_phone=${encodeURIComponent(other)}`));
        assertDocumented('GET', `${prefix}/groups/{id}`, await read(`${prefix}/groups/120363000000000000%40g.us?from_phone=${encodeURIComponent(from)}`));
        const groupUrl = `${prefix}/groups/${encodeURIComponent(created.json().id)}`;
        assertDocumented('POST', `${prefix}/groups/{id}/participants`, await send(`${groupUrl}/participants`, { from_phone: from, action: 'add', participants: ['+14155550403', other] }));
        assertDocumented('POST', `${prefix}/groups/{id}/participants`, await send(`${groupUrl}/participants`, { from_phone: other, action: 'remove', participants: [from] }));
        const patched = await test.inject({ method: 'PATCH', url: groupUrl, headers: { authorization: `Bearer ${account.apiKey}` }, payload: { from_phone: from, description: 'documented' } });
        assertDocumented('PATCH', `${prefix}/groups/{id}`, patched);
        assertDocumented('GET', `${prefix}/groups/{id}/invite_link`, await read(`${groupUrl}/invite_link?from_phone=${encodeURIComponent(from)}`));
        assertDocumented('POST', `${prefix}/groups/{id}/invite_link/revoke`, await send(`${groupUrl}/invite_link/revoke`, { from_phone: from }));
        assertDocumented('POST', `${prefix}/groups/{id}/leave`, await send(`${groupUrl}/leave`, { from_phone: other }));
        assertDocumented('POST', `${prefix}/groups/{id}/leave`, await send(`${groupUrl}/leave`, { from_phone: other }));
      }
      assertDocumented('POST', '/messages/{id}/revoke', await send(`/messages/${sent.message_id}/revoke`, {}));
      assertDocumented('POST', '/api/messages/{id}/revoke', await send(`/api/messages/${sent.message_id}/revoke`, {}));
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), other, 'disconnected');
      assertDocumented('POST', '/send_message', await send('/send_message', { from_phone: other, to_phone: '+14155550100', message: 'hi' }));
      const broke = await seedAccount(test.gateway, { monthlyLimit: 0 });
      assertDocumented('POST', '/send_message', await send('/send_message', { from_phone: broke.phones[0], to_phone: '+14155550100', message: 'hi' }, broke.apiKey));
      for (const url of ['/sandbox/receive', '/api/sandbox/receive']) {
        assertDocumented('POST', url, await send(url, { from_phone: '+14155550100', to_phone: from, message: 'in' }));
        assertDocumented('POST', url, await send(url, { from_phone: '+14155550100', to_phone: '+14155550177', message: 'in' }));
      }
      // The account's third simulated message this minute is its last; the next is refused.
      assertDocumented('POST', '/sandbox/receive', await send('/sandbox/receive', { from_phone: '+14155550100', to_phone: from, message: 'in' }));
      assertDocumented('POST', '/sandbox/receive', await send('/sandbox/receive', { from_phone: '+14155550100', to_phone: from, message: 'in' }));
      assertDocumented('GET', '/health', await test.inject({ method: 'GET', url: '/health' }));
    });
  });
}
