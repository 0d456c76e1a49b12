import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { signedCallHeaders } from '../../../src/cluster/node-client.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';

/** The parts of an answer a caller can see, with the request id and the path it names made neutral. */
function visible(response: LightMyRequestResponse, path: string) {
  const body = response.json() as { request_id: string; message: string };
  const headers = { ...response.headers };
  for (const varying of ['x-request-id', 'content-length', 'date']) delete headers[varying];
  return {
    statusCode: response.statusCode,
    headers,
    body: { ...body, request_id: '<id>', message: body.message.replace(path, '<path>') },
  };
}

for (const dialect of dialects) {
  describe(`internal routes look like unknown paths to anyone but the node they are signed for (${dialect})`, () => {
    let test: TestGateway;
    let numberId: string;
    let accountId: string;

    before(async () => {
      test = await startTestGateway(dialect);
      const seeded = await seedAccount(test.gateway);
      numberId = (await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!)).id;
      accountId = seeded.accountId;
    });
    after(() => test.close());

    const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
      test.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });
    // A number-control operation as a console on another node hands it over: the number's linking attempt.
    const path = '/internal/operations/controlLinkState';
    const linkState = () =>
      JSON.stringify({ account_id: accountId, params: { id: numberId }, query: {}, body: null, idempotency_key: null });

    it('an unsigned internal call is answered byte for byte as an unknown path, whatever its body', async () => {
      const internalPath = '/internal/operations/sendMessage';
      const unknownPath = '/internal/no-such-route';
      for (const payload of ['{}', '{"account_id":"acc_x"', 'x'.repeat(64)]) {
        const refused = await post(internalPath, payload);
        const unknown = await post(unknownPath, payload);
        assert.equal(refused.statusCode, 404, refused.body);
        assert.deepEqual(visible(refused, internalPath), visible(unknown, unknownPath), `body ${JSON.stringify(payload.slice(0, 20))}`);
      }
    });

    it('a call signed for this node is served, and the same call signed for another node is refused as an unknown path', async () => {
      const thisNode = test.gateway.keeper.nodeId;
      const served = await post(path, linkState(), signedCallHeaders(test.gateway.clusterKey, thisNode, 'POST', path, linkState()));
      assert.equal(served.statusCode, 200, served.body);
      assert.deepEqual(served.json(), { attempt: null });

      const forAnother = await post(
        path,
        linkState(),
        signedCallHeaders(test.gateway.clusterKey, 'node_another', 'POST', path, linkState()),
      );
      const unknown = await post('/internal/no-such-route', '{}');
      assert.deepEqual(visible(forAnother, path), visible(unknown, '/internal/no-such-route'));
    });

    it('a signed call whose body is not the one signed is refused as an unknown path', async () => {
      const headers = signedCallHeaders(test.gateway.clusterKey, test.gateway.keeper.nodeId, 'POST', path, linkState());
      const altered = await post(path, linkState().replace(numberId, 'num_other'), headers);
      assert.equal(altered.statusCode, 404);
      assert.equal(altered.json().error, 'not_found');
    });

    it('a signed call is served once: its replay is refused', async () => {
      const headers = signedCallHeaders(test.gateway.clusterKey, test.gateway.keeper.nodeId, 'POST', path, linkState());
      assert.equal((await post(path, linkState(), headers)).statusCode, 200);
      assert.equal((await post(path, linkState(), headers)).statusCode, 404);
    });
  });
}
