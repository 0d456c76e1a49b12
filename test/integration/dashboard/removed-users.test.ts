import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { createInviteLink, createTeam, signedIn } from '../../support/team-support.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';

for (const dialect of dialects) {
  describe(`a removed or demoted user keeps no power (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test?.close());

    it('removing an owner revokes the invites they made, so their saved link does not bring them back', async () => {
      const team = await createTeam(test, 'Gone');
      const leaving = (
        await createTestUser(test.gateway, {
          accountId: team.accountId,
          email: `leaving-${team.accountId}@gone.test`,
          password: 'pale orbit cactus forty',
          role: 'owner',
        })
      ).user;
      const leaver = new DashboardClient(test);
      await leaver.signIn(leaving.email, 'pale orbit cactus forty');
      const saved = new URL(await createInviteLink(leaver, 'owner')).pathname;

      const owner = await signedIn(test, team.owner);
      const teamPage = await owner.get('/team');
      assert.match(
        teamPage.body,
        new RegExp(`<td>owner</td><td>${leaving.email.replace(/[.]/g, '\\.')}</td>`),
        'an open invite shows who made it',
      );
      assert.equal((await owner.submit('/team', `/team/${leaving.id}/remove`, {})).statusCode, 303);

      assert.equal((await new DashboardClient(test).get(saved)).statusCode, 404, 'the saved link is dead');
      assert.equal((await test.gateway.team.listOpenInvites(team.accountId)).length, 0);
    });

    it('demoting a user revokes the invites that grant more than their new role, and keeps the rest', async () => {
      const team = await createTeam(test, 'Demoted');
      const { invite: ownerInvite } = await test.gateway.team.createInvite(team.accountId, 'owner', team.admin.id);
      const { invite: adminInvite } = await test.gateway.team.createInvite(team.accountId, 'admin', team.admin.id);
      const { invite: memberInvite } = await test.gateway.team.createInvite(team.accountId, 'member', team.admin.id);
      await test.gateway.team.changeRole(team.accountId, team.admin.id, 'admin');
      assert.deepEqual(
        (await test.gateway.team.listOpenInvites(team.accountId)).map((invite) => invite.id).sort(),
        [ownerInvite.id, adminInvite.id, memberInvite.id].sort(),
        'no change, no revocation',
      );
      await test.gateway.team.changeRole(team.accountId, team.admin.id, 'member');
      assert.deepEqual(
        (await test.gateway.team.listOpenInvites(team.accountId)).map((invite) => invite.id),
        [memberInvite.id],
      );
    });

    it("a removed admin's key still sends, is marked with its maker on the keys page, and the team page revokes it", async () => {
      const team = await createTeam(test, 'Orphan');
      const phone = (await test.gateway.numbers.addNumber(operatorScope(), { accountId: team.accountId, phone: uniquePhone() })).phone;
      const admin = await signedIn(test, team.admin);
      await admin.submit('/keys', '/keys', { name: 'made by the admin', scopes: ['read', 'send'] });
      const [key] = await test.gateway.apiKeys.listKeys(team.accountId);
      assert.ok(key !== undefined);
      // The plaintext is shown once to the admin; the test makes a key of its own through the same service to send with.
      const sending = await test.gateway.apiKeys.createKey({ accountId: team.accountId, name: 'sender', createdByUserId: team.admin.id });

      const owner = await signedIn(test, team.owner);
      await owner.submit('/team', `/team/${team.admin.id}/remove`, {});

      const sent = await test.post(
        '/send_message',
        { from_phone: phone, to_phone: '+14155550100', message: 'still working' },
        sending.plaintext,
      );
      assert.equal(sent.statusCode, 200, 'a removal does not take production down');
      const keysPage = await owner.get('/keys');
      assert.ok(keysPage.body.includes(`a removed user (${team.admin.email})`), 'attribution survives the removal');
      const teamPage = await owner.get('/team');
      assert.match(teamPage.body, /API keys of removed users/);
      assert.ok(teamPage.body.includes(`/keys/${sending.apiKey.id}/revoke`), 'the team page offers to revoke it');

      assert.equal((await owner.submit('/team', `/keys/${sending.apiKey.id}/revoke`, {})).statusCode, 303);
      const refused = await test.post(
        '/send_message',
        { from_phone: phone, to_phone: '+14155550100', message: 'now refused' },
        sending.plaintext,
      );
      assert.equal(refused.statusCode, 401);
      assert.ok(!(await owner.get('/team')).body.includes(`/keys/${sending.apiKey.id}/revoke`), 'a revoked key leaves the list');
    });
  });
}
