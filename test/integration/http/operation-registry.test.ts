import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signedCallHeaders } from '../../../src/cluster/node-client.ts';
import { errorCatalogue, type ErrorCode } from '../../../src/domain/errors.ts';
import { publicOperations } from '../../../src/http/operations/catalogue.ts';
import { dialects } from '../../support/databases.ts';
import { documentChecker } from '../../support/documented-answers.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

interface ErrorSchema {
  properties?: { error?: { enum?: string[] } };
  allOf?: ErrorSchema[];
}
interface DocumentedResponse {
  $ref?: string;
  content?: { 'application/json'?: { schema: ErrorSchema } };
}
interface DocumentedOperation {
  operationId: string;
  responses: Record<string, DocumentedResponse>;
}
type Document = {
  paths: Record<string, Record<string, DocumentedOperation>>;
  components: { responses?: Record<string, DocumentedResponse> };
};

/**
 * The codes an operation's document lists for a status: its answer may be a shared response
 * (`#/components/responses/…`), whose schema narrows the Error envelope's `error` in an allOf.
 */
function documentedCodes(document: Document, operation: DocumentedOperation, status: string): string[] {
  let response = operation.responses[status];
  if (response?.$ref !== undefined) response = document.components.responses?.[response.$ref.split('/').pop()!];
  const schema = response?.content?.['application/json']?.schema;
  const parts = schema === undefined ? [] : [schema, ...(schema.allOf ?? [])];
  return parts.find((part) => part.properties?.error?.enum !== undefined)?.properties?.error?.enum ?? [];
}

for (const dialect of dialects) {
  describe(`operations are declared once and served by the registry (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let document: Document;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway);
      document = (await test.inject({ method: 'GET', url: '/openapi.json' })).json() as Document;
    });
    after(() => test?.close());

    /** A call signed for this node, as another node makes it. */
    const signedPost = (path: string, body: unknown) => {
      const payload = JSON.stringify(body);
      const headers = signedCallHeaders(test.gateway.clusterKey, test.gateway.keeper.nodeId, 'POST', path, payload);
      return test.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', ...headers }, payload });
    };

    it('every declared operation is served at its path and under /api, each listed once with a unique operationId', () => {
      for (const operation of publicOperations) {
        const path = operation.path.replace(/:([a-z_]+)/gi, '{$1}');
        const method = operation.method.toLowerCase();
        assert.equal(document.paths[path]?.[method]?.operationId, operation.operationId, `${operation.method} ${path}`);
        assert.equal(
          document.paths[`/api${path}`]?.[method]?.operationId,
          `${operation.operationId}Api`,
          `${operation.method} /api${path}`,
        );
      }
    });

    it("an operation's error responses list only public codes it declares, so no 401 offers a sign-in failure", () => {
      for (const operation of publicOperations) {
        const documented = document.paths[operation.path.replace(/:([a-z_]+)/gi, '{$1}')]![operation.method.toLowerCase()]!;
        const listed = Object.keys(documented.responses)
          .filter((status) => Number(status) >= 400)
          .flatMap((status) => documentedCodes(document, documented, status));
        assert.deepEqual(new Set(listed), new Set(operation.errors), operation.operationId);
        for (const code of listed)
          assert.equal(
            (errorCatalogue[code as ErrorCode] as { publicApi?: boolean }).publicApi,
            true,
            `${operation.operationId} lists ${code}`,
          );
        assert.deepEqual(documentedCodes(document, documented, '401'), ['missing_api_key', 'invalid_api_key'], operation.operationId);
      }
    });

    it('an operation forwarded through the one signed dispatch route is run here, as its owner', async () => {
      const forwarded = {
        account_id: account.accountId,
        params: {},
        query: {},
        body: { from_phone: account.phones[0], to_phone: '+14155550123', state: 'composing' },
        idempotency_key: null,
      };
      const answer = await signedPost('/internal/operations/showTyping', forwarded);
      assert.equal(answer.statusCode, 200, answer.body);
      assert.deepEqual([answer.json().from_phone, answer.json().state], [account.phones[0], 'composing']);

      const groups = await signedPost('/internal/operations/listGroups', {
        ...forwarded,
        body: null,
        query: { from_phone: account.phones[0] },
      });
      assert.equal(groups.statusCode, 200, groups.body);
      assert.deepEqual(groups.json(), { groups: [] });
    });

    it('a refusal the gateway gives is one the document lists: a blocked simulated sender is 409 sender_blocked', async () => {
      const [own] = account.phones as [string];
      const sender = '+14155550177';
      const auth = { authorization: `Bearer ${account.apiKey}` };
      const blocked = await test.inject({ method: 'POST', url: '/blocklist', headers: auth, payload: { from_phone: own, phone: sender } });
      assert.equal(blocked.statusCode, 200, blocked.body);
      const refused = await test.inject({
        method: 'POST',
        url: '/sandbox/receive',
        headers: auth,
        payload: { from_phone: sender, to_phone: own, message: 'hello' },
      });
      assert.deepEqual([refused.statusCode, refused.json().error], [409, 'sender_blocked'], refused.body);
      const check = documentChecker(document);
      const answer = { method: 'POST', path: '/sandbox/receive', status: 409, contentType: 'application/json', body: refused.body };
      assert.equal(check(answer), undefined);
    });

    it('a signed dispatch to an operation that does not exist is answered as an unknown path', async () => {
      const answer = await signedPost('/internal/operations/noSuchOperation', {
        account_id: account.accountId,
        params: {},
        query: {},
        body: {},
        idempotency_key: null,
      });
      assert.equal(answer.statusCode, 404);
      assert.equal(answer.json().error, 'not_found');
    });
  });
}
