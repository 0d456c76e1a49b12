import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const CUSTOMER = '+14155550100';

// Groups on the simulated network: created by one number, seen by its members only.
for (const dialect of dialects) {
  describe(`groups (${dialect})`, () => {
    let test: TestGateway;
    let acme: SeededAccount;
    let globex: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      acme = await seedAccount(test.gateway, { numbers: 3 });
      globex = await seedAccount(test.gateway);
    });
    after(() => test?.close());

    const get = (url: string, apiKey: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
    const groupUrl = (prefix: string, id: string, fromPhone: string) =>
      `${prefix}/groups/${encodeURIComponent(id)}?from_phone=${encodeURIComponent(fromPhone)}`;

    it('creates a group with the creator as super admin, which each member lists and reads, at both paths', async () => {
      const [creator, member] = acme.phones as [string, string];
      const created = await test.post(
        '/groups',
        { from_phone: creator, subject: '  Order 1042  ', participants: [member, '+1 415 555 0100', CUSTOMER] },
        acme.apiKey,
      );
      assert.equal(created.statusCode, 201, created.body);
      const group = created.json();
      assert.match(group.id, /^\d+@g\.us$/);
      assert.deepEqual(
        { ...group, id: undefined },
        {
          id: undefined,
          subject: 'Order 1042',
          description: null,
          size: 3,
          is_admin: true,
          participants: [
            { phone: creator, lid: null, role: 'superadmin' },
            { phone: member, lid: null, role: 'member' },
            { phone: CUSTOMER, lid: null, role: 'member' },
          ],
        },
      );

      const listed = await get(`/api/groups?from_phone=${encodeURIComponent(member)}`, acme.apiKey);
      assert.equal(listed.statusCode, 200, listed.body);
      assert.deepEqual(listed.json().groups, [{ id: group.id, subject: 'Order 1042', size: 3, is_admin: false }]);
      for (const prefix of ['', '/api']) {
        const read = await get(groupUrl(prefix, group.id, member), acme.apiKey);
        assert.deepEqual([read.statusCode, read.json().id, read.json().is_admin], [200, group.id, false]);
      }
      const outsider = acme.phones[2]!;
      assert.deepEqual(
        (await get(`/groups?from_phone=${encodeURIComponent(outsider)}`, acme.apiKey)).json().groups,
        [],
        'a number in no group lists none',
      );
    });

    it('answers 404 for a group the account does not know, and 403 not_group_member for its own group asked by a number not in it', async () => {
      const [creator] = acme.phones as [string];
      const group = (
        await test.post('/api/groups', { from_phone: creator, subject: 'Private', participants: [CUSTOMER] }, acme.apiKey)
      ).json();
      const cases: [string, string, string][] = [
        [groupUrl('', group.id, globex.phones[0]!), globex.apiKey, "another account's group, asked by its own number"],
        [groupUrl('', '120363000000000000@g.us', creator), acme.apiKey, 'an unknown group'],
        [groupUrl('/api', 'not-a-group', creator), acme.apiKey, 'a malformed id'],
      ];
      for (const [url, apiKey, what] of cases) {
        const response = await get(url, apiKey);
        assert.deepEqual([response.statusCode, response.json().error], [404, 'group_not_found'], what);
      }
      // The account knows the group through its creator, so another of its numbers is told it is no member.
      const notMember = await get(groupUrl('', group.id, acme.phones[2]!), acme.apiKey);
      assert.deepEqual(
        [notMember.statusCode, notMember.json().error, notMember.json().meta],
        [403, 'not_group_member', { field: 'id', group_id: group.id }],
      );
      const foreignNumber = await get(groupUrl('', group.id, creator), globex.apiKey);
      assert.deepEqual([foreignNumber.statusCode, foreignNumber.json().error], [403, 'phone_not_owned']);
    });

    it('refuses a bad subject, bad participants and a missing from_phone with the field named', async () => {
      const [creator] = acme.phones as [string];
      const cases: [object, number, string, string][] = [
        [{ from_phone: creator, subject: '   ', participants: [CUSTOMER] }, 400, 'invalid_request', 'subject'],
        [{ from_phone: creator, subject: 'x'.repeat(101), participants: [CUSTOMER] }, 400, 'invalid_request', 'subject'],
        [{ from_phone: creator, subject: 'Ok', participants: [] }, 400, 'invalid_request', 'participants'],
        [{ from_phone: creator, subject: 'Ok', participants: [creator] }, 400, 'invalid_request', 'participants'],
        [{ from_phone: creator, subject: 'Ok', participants: [CUSTOMER, 'nope'] }, 400, 'invalid_phone_number', 'participants[1]'],
        [{ from_phone: creator, subject: 'Ok' }, 400, 'invalid_request', 'participants'],
        [{ from_phone: globex.phones[0], subject: 'Ok', participants: [CUSTOMER] }, 403, 'phone_not_owned', 'from_phone'],
      ];
      for (const [body, status, error, field] of cases) {
        const response = await test.post('/groups', body, acme.apiKey);
        assert.deepEqual(
          [response.statusCode, response.json().error, response.json().meta?.field],
          [status, error, field],
          JSON.stringify(body),
        );
      }
      const missing = await get('/groups', acme.apiKey);
      assert.deepEqual([missing.statusCode, missing.json().error, missing.json().meta?.field], [400, 'invalid_request', 'from_phone']);
      assert.equal(missing.json().message, 'The query parameter from_phone is missing.');
      const unknown = await get(`/groups?from_phone=${encodeURIComponent(creator)}&colour=blue`, acme.apiKey);
      assert.deepEqual([unknown.statusCode, unknown.json().meta], [400, { field: 'colour', problem: 'unknown' }]);
      assert.equal(unknown.json().message, 'The query parameter colour is not one this operation takes.');
    });

    it("answers 503 while the number's session is down", async () => {
      const down = acme.phones[2]!;
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), down, 'disconnected');
      const response = await get(`/groups?from_phone=${encodeURIComponent(down)}`, acme.apiKey);
      assert.deepEqual([response.statusCode, response.json().error], [503, 'number_not_connected']);
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), down, 'connected');
    });
  });
}
