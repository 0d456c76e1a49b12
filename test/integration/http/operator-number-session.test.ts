import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

/**
 * A number's session over the operator API (docs/operator-api.md#a-numbers-session, ADR 0064):
 * a sandbox number is linked by QR and by pairing code through the API alone, its QR rotating as
 * WhatsApp's does, and logged out; each change an audit row. Through other nodes of a cluster:
 * test/integration/cluster/operator-tokens.test.ts.
 */

interface Session {
  number_id: string;
  phone: string;
  status: string;
  link: null | {
    method: string;
    status: string;
    qr: string | null;
    qr_png: string | null;
    qr_version: number;
    pairing_code: string | null;
    active: boolean;
  };
}

for (const dialect of dialects) {
  describe(`a number's session over the operator API (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let token: string;
    let numberId: string;

    const call = (method: 'GET' | 'POST', url: string, bearer: string, body?: object) =>
      test.inject({
        method,
        url,
        headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { payload: JSON.stringify(body) }),
      });
    const session = async (query = ''): Promise<Session> => {
      const read = await call('GET', `/admin/numbers/${numberId}/session${query}`, token);
      assert.equal(read.statusCode, 200, read.body);
      return read.json() as Session;
    };
    const scan = (code: string) => call('POST', '/sandbox/link_scan', account.apiKey, { phone: account.phones[0], code });

    before(async () => {
      // A new QR every second, so that a rotation is seen within the test's wait.
      test = await startTestGateway(dialect, { WAGW_SANDBOX_LINK_QR_SECONDS: '1' });
      account = await seedAccount(test.gateway);
      token = (await test.gateway.operatorTokens.create('onboarding', CLI_ACTOR)).plaintext;
      numberId = (await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!)).id;
    });
    after(() => test?.close());

    it('links by QR: the QR rotates (text and PNG), an old QR is refused, the current one links, and the number sends again', async () => {
      const started = await call('POST', `/api/admin/numbers/${numberId}/session/link`, token, { method: 'qr' });
      assert.equal(started.statusCode, 200, started.body);
      assert.deepEqual([started.json().status, started.json().link.method, started.json().link.active], ['connecting', 'qr', true]);

      const first = await session('?qr_version_after=0&wait_seconds=50');
      assert.ok(first.link?.qr?.startsWith('2@'), JSON.stringify(first));
      assert.match(first.link?.qr_png ?? '', /^data:image\/png;base64,iVBOR/);
      const next = await session(`?qr_version_after=${first.link!.qr_version}&wait_seconds=50`);
      assert.ok(next.link!.qr_version > first.link!.qr_version, 'the long-poll answers with a newer QR');
      assert.notEqual(next.link!.qr, first.link!.qr);

      const stale = await scan(first.link!.qr!);
      assert.equal(stale.statusCode, 400, stale.body);
      assert.deepEqual([stale.json().error, stale.json().meta.field], ['invalid_request', 'code']);
      assert.equal(typeof stale.json().details, 'string');

      // The QR current when it is read may be replaced before the scan lands: the phone scans again, as a person would.
      let linked = await scan((await session()).link!.qr!);
      while (linked.statusCode === 400) linked = await scan((await session()).link!.qr!);
      assert.equal(linked.statusCode, 200, linked.body);
      const after = await session();
      assert.deepEqual([after.status, after.link?.status, after.link?.active, after.link?.qr], ['connected', 'connected', false, null]);
      const sent = await call('POST', '/send_message', account.apiKey, {
        from_phone: account.phones[0],
        to_phone: '+14155550100',
        message: 'linked',
      });
      assert.ok(sent.statusCode === 200 || sent.statusCode === 202, sent.body);
    });

    it('logs out, then links by pairing code, the code typed on the phone with its dash', async () => {
      const out = await call('POST', `/admin/numbers/${account.phones[0]}/session/logout`, token, {});
      assert.equal(out.statusCode, 200, out.body);
      assert.equal(out.json().status, 'logged_out');
      const refused = await call('POST', '/send_message', account.apiKey, {
        from_phone: account.phones[0],
        to_phone: '+14155550100',
        message: 'x',
      });
      assert.equal(refused.statusCode, 503, refused.body);

      const started = await call('POST', `/admin/numbers/${numberId}/session/link`, token, { method: 'pairing_code' });
      assert.equal(started.statusCode, 200, started.body);
      let code = (await session()).link?.pairing_code ?? null;
      while (code === null) code = (await session('?qr_version_after=0&wait_seconds=5')).link?.pairing_code ?? null;
      assert.match(code, /^[A-Z0-9]{8}$/);
      const linked = await scan(`${code.slice(0, 4)}-${code.slice(4)}`.toLowerCase());
      assert.equal(linked.statusCode, 200, linked.body);
      assert.equal((await session()).status, 'connected');

      const audit = await test.gateway.audit.list(operatorScope(), { accountId: account.accountId, limit: 50 });
      // The session's rows: the number's adding by the seed is a row of its own, before them.
      const actions = audit
        .filter((event) => event.targetId === numberId && event.action !== 'number.added')
        .map((event) => [event.action, event.actor.kind]);
      assert.deepEqual(actions, [
        ['number.link_started', 'operator_token'],
        ['number.logged_out', 'operator_token'],
        ['number.link_started', 'operator_token'],
      ]);
    });

    it('cancels linking and restarts the session it left disconnected, each an audit row; a refused restart writes none', async () => {
      const rowsOf = async () =>
        (await test.gateway.audit.list(operatorScope(), { accountId: account.accountId, limit: 50 }))
          .filter((event) => event.targetId === numberId && ['number.link_cancelled', 'number.restarted'].includes(event.action))
          .map((event) => [event.action, event.actor.kind]);
      const statusComes = async (status: string) => {
        for (let deadline = Date.now() + 10_000, now = await session(); now.status !== status; now = await session())
          assert.ok(Date.now() < deadline, `the session did not become ${status}: ${JSON.stringify(now)}`);
      };
      await statusComes('connected');
      const refused = await call('POST', `/admin/numbers/${numberId}/session/restart`, token, {});
      assert.deepEqual([refused.statusCode, refused.json().error], [409, 'session_action_refused']);
      assert.deepEqual(await rowsOf(), [], 'a refused restart is no action');

      assert.equal((await call('POST', `/admin/numbers/${numberId}/session/link`, token, { method: 'qr' })).statusCode, 200);
      const cancelled = await call('POST', `/admin/numbers/${numberId}/session/link/cancel`, token, {});
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.equal((cancelled.json() as Session).link?.active, false);
      await statusComes('disconnected');
      const restarted = await call('POST', `/admin/numbers/${numberId}/session/restart`, token, {});
      assert.equal(restarted.statusCode, 200, restarted.body);
      await statusComes('connected');
      // Newest first, as the audit log reads.
      assert.deepEqual(await rowsOf(), [
        ['number.restarted', 'operator_token'],
        ['number.link_cancelled', 'operator_token'],
      ]);
    });

    it('refuses unknown input, an unknown number, a restart of a connected session, and a call without a token, in the envelope', async () => {
      const unknownField = await call('POST', `/admin/numbers/${numberId}/session/link`, token, { method: 'qr', phone: '+1' });
      assert.deepEqual([unknownField.statusCode, unknownField.json().error], [400, 'invalid_request']);
      const badMethod = await call('POST', `/admin/numbers/${numberId}/session/link`, token, { method: 'sms' });
      assert.deepEqual([badMethod.statusCode, badMethod.json().error], [400, 'invalid_request']);
      const badQuery = await call('GET', `/admin/numbers/${numberId}/session?wait=1`, token);
      assert.deepEqual([badQuery.statusCode, badQuery.json().error], [400, 'invalid_request']);
      const missing = await call('GET', '/admin/numbers/num_nothing/session', token);
      assert.deepEqual([missing.statusCode, missing.json().error], [404, 'number_not_found']);
      const restart = await call('POST', `/admin/numbers/${numberId}/session/restart`, token, {});
      assert.deepEqual([restart.statusCode, restart.json().error], [409, 'session_action_refused']);
      assert.match(restart.json().request_id, /^req_/);
      const keyed = await call('POST', `/admin/numbers/${numberId}/session/logout`, account.apiKey, {});
      assert.deepEqual([keyed.statusCode, keyed.json().error], [401, 'invalid_operator_token']);
      const other = await seedAccount(test.gateway);
      const notYours = await call('POST', '/sandbox/link_scan', other.apiKey, { phone: account.phones[0], code: 'ABCD1234' });
      assert.deepEqual([notYours.statusCode, notYours.json().error], [403, 'phone_not_owned']);
    });
  });
}
