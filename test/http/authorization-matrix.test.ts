import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../src/domain/tenant-scope.ts';
import { dialects } from '../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../support/gateway.ts';

/**
 * Every operation of the public API that takes an API key, probed across two accounts: account
 * B's key aimed at account A's objects must be refused with the envelope and leave A untouched,
 * while A's own key gets through (so each probe is known to aim at something real). The list of
 * operations is read from the OpenAPI document the app serves, so a new route without a probe
 * here fails the first test until someone writes down how to attack it.
 */

interface Probe {
  /** The request made with whichever key is given, aimed at account A's objects. */
  request(owner: SeededAccount, marker: string): { body: unknown };
  /** What B's key gets. 404 for an object by id; 403 for a phone of another account. */
  refusedWith: { status: number; error: string };
}

const sendFromOwnersNumber: Probe = {
  request: (owner, marker) => ({ body: { from_phone: owner.phones[0], to_phone: '+14155550100', message: marker } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
};

const receiveOnOwnersNumber: Probe = {
  request: (owner, marker) => ({ body: { from_phone: '+14155550100', to_phone: owner.phones[0], message: marker } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
};

const PROBES: Record<string, Probe> = {
  'POST /send_message': sendFromOwnersNumber,
  'POST /api/send_message': sendFromOwnersNumber,
  'POST /sandbox/receive': receiveOnOwnersNumber,
  'POST /api/sandbox/receive': receiveOnOwnersNumber,
};

interface OpenApiDocument {
  paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
}

/** The operations that take a bearer API key, as "METHOD /path". */
function keyedOperations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([pathName, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.security?.some((requirement) => 'apiKey' in requirement) === true)
      .map(([method]) => `${method.toUpperCase()} ${pathName}`),
  );
}

for (const dialect of dialects) {
  describe(`the public API's authorization matrix (${dialect})`, () => {
    let test: TestGateway;
    let owner: SeededAccount;
    let stranger: SeededAccount;
    let operations: string[];

    before(async () => {
      test = await startTestGateway(dialect);
      owner = await seedAccount(test.gateway);
      stranger = await seedAccount(test.gateway);
      operations = keyedOperations((await test.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument);
    });
    after(() => test?.close());

    it('every keyed operation has a cross-account probe', () => {
      assert.ok(operations.length >= 3, `the document lists keyed operations: ${operations.join(', ')}`);
      const unprobed = operations.filter((operation) => PROBES[operation] === undefined);
      assert.deepEqual(unprobed, [], 'write a probe for each new operation in PROBES');
    });

    it("another account's key is refused on every keyed operation, and the owner's data is untouched", async () => {
      for (const operation of operations) {
        const probe = PROBES[operation]!;
        const [method, url] = operation.split(' ') as ['POST', string];
        const marker = `cross-account probe of ${operation}`;
        const response = await test.post(url, probe.request(owner, marker).body, stranger.apiKey);
        assert.equal(response.statusCode, probe.refusedWith.status, `${method} ${url}: ${response.body}`);
        assert.equal(response.json().error, probe.refusedWith.error, operation);
        const page = await test.gateway.history.page(accountScope(owner.accountId), { limit: 100 });
        assert.ok(!page.messages.some((message) => message.text === marker), `${operation} left a trace in the owner's account`);
      }
    });

    it("the owner's own key gets through every probe, so each probe aims at something real", async () => {
      for (const operation of operations) {
        const [, url] = operation.split(' ') as ['POST', string];
        const marker = `owner's own call to ${operation}`;
        const response = await test.post(url, PROBES[operation]!.request(owner, marker).body, owner.apiKey);
        assert.equal(response.statusCode, 200, `${operation}: ${response.body}`);
      }
    });
  });
}
