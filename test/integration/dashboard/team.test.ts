import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SIGN_IN_LIMITS } from '../../../src/accounts/sign-in-throttle.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { createInviteLink, createTeam, PASSWORD, signedIn } from '../../support/team-support.ts';

const DAY_MS = 24 * 3_600_000;

for (const dialect of dialects) {
  describe(`dashboard team and invites (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_TRUST_PROXY: 'true' });
    });
    after(() => test.close());

    it('sends a signed-out visitor of /team to the sign-in page', async () => {
      const response = await new DashboardClient(test).get('/team');
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/login?next=%2Fteam');
    });

    it('shows owners the role controls and the invite form, and members the list only', async () => {
      const team = await createTeam(test, 'Acme');
      const owner = await signedIn(test, team.owner);
      const ownerPage = await owner.get('/team');
      assert.equal(ownerPage.statusCode, 200);
      for (const user of [team.owner, team.admin, team.member]) assert.ok(ownerPage.body.includes(user.email));
      assert.ok(ownerPage.body.includes(`aria-label="Role for ${team.member.email}"`));
      assert.ok(ownerPage.body.includes(`action="/team/${team.member.id}/remove"`));
      assert.ok(!ownerPage.body.includes(`action="/team/${team.owner.id}/remove"`), 'no button to remove yourself');
      assert.match(ownerPage.body, /Create invite link/);
      assert.match(ownerPage.body, /<span class="badge">you<\/span>/);

      const member = await signedIn(test, team.member);
      const memberPage = await member.get('/team');
      assert.equal(memberPage.statusCode, 200);
      assert.ok(memberPage.body.includes(team.owner.email));
      assert.doesNotMatch(memberPage.body, /Create invite link|Change role|\/remove"/);
    });

    it('lets an invited user join once through the link, then sign in with the invited role', async () => {
      const team = await createTeam(test, 'Acme');
      const owner = await signedIn(test, team.owner);
      const link = await createInviteLink(owner, 'admin');
      assert.match(link, /^http:\/\/localhost(:\d+)?\/invite\/[A-Za-z0-9_-]{43}$/);
      const path = new URL(link).pathname;
      const teamPage = await owner.get('/team');
      assert.match(teamPage.body, /Open invites[\s\S]*<td>admin<\/td>/);
      const [made] = await test.gateway.audit.list(operatorScope(), { accountId: team.accountId, limit: 1 });
      assert.deepEqual([made?.action, made?.actor.id, made?.details?.role], ['invite.created', team.owner.id, 'admin']);
      assert.ok(!JSON.stringify(made).includes(path.split('/').pop()!), 'the audit row holds no part of the link');

      // A second tab opened the link too, before the first one joined.
      const secondTab = new DashboardClient(test);
      assert.equal((await secondTab.get(path)).statusCode, 200);

      const visitor = new DashboardClient(test);
      const invitePage = await visitor.get(path);
      assert.equal(invitePage.statusCode, 200);
      assert.match(invitePage.body, /Join Acme/);
      assert.match(invitePage.body, /as an admin/);
      const joined = await visitor.post(path, { email: 'New.Admin@Acme.test', password: 'a long new password' });
      assert.equal(joined.statusCode, 303);
      assert.equal(joined.headers.location, '/login');
      assert.equal(visitor.cookie('wagw_session'), undefined, 'joining signs nobody in: that would tell a taken email from a new one');
      assert.match((await visitor.get('/login')).body, /Sign in with the email and password you just chose/);
      assert.equal((await visitor.signIn('new.admin@acme.test', 'a long new password')).statusCode, 303);
      const overview = await visitor.get('/');
      assert.equal(overview.statusCode, 200);
      assert.match(overview.body, /new\.admin@acme\.test · Acme/);

      const users = await test.gateway.accounts.listUsers(accountScope(team.accountId));
      const created = users.find((user) => user.email === 'new.admin@acme.test');
      assert.equal(created?.role, 'admin');
      assert.equal((await test.gateway.team.listOpenInvites(team.accountId)).length, 0, 'the invite is used up');

      const secondJoin = await secondTab.post(path, { email: 'second@acme.test', password: 'a long new password' });
      assert.equal(secondJoin.statusCode, 404);
      assert.match(secondJoin.body, /not valid/);
      assert.equal(secondTab.cookie('wagw_session'), undefined);
      const again = await new DashboardClient(test).get(path);
      assert.equal(again.statusCode, 404);
      assert.equal((await test.gateway.accounts.listUsers(accountScope(team.accountId))).length, 4, 'a link makes one user');
    });

    it('re-renders the join form with the error and the email typed, and keeps the invite usable', async () => {
      const team = await createTeam(test, 'Acme');
      const { token } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id);
      const visitor = new DashboardClient(test);
      await visitor.get(`/invite/${token}`);
      const short = await visitor.post(`/invite/${token}`, { email: 'typed@acme.test', password: 'short' });
      assert.equal(short.statusCode, 400);
      assert.match(short.body, /role="alert"[^>]*>A password needs at least 12 characters/);
      assert.match(short.body, /value="typed@acme\.test"/);
      assert.equal((await test.gateway.team.listOpenInvites(team.accountId)).length, 1, 'the invite still works');
    });

    it('answers an email that is already registered exactly as a join, and keeps the invite usable', async () => {
      const team = await createTeam(test, 'Acme');
      const other = await createTeam(test, 'Beta');
      const { token } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id);
      const submit = async (email: string) => {
        const visitor = new DashboardClient(test);
        await visitor.get(`/invite/${token}`);
        const response = await visitor.post(`/invite/${token}`, { email, password: 'a long new password' });
        return { response, visitor };
      };
      // Another tenant's member and the operator: existing emails the submitter has no business knowing of.
      const operator = (
        await createTestUser(test.gateway, {
          email: 'ops@gateway.test',
          accountId: null,
          isOperator: true,
          password: 'an operator password',
        })
      ).user;
      const answers = [];
      for (const email of [other.member.email, operator.email]) {
        const { response, visitor } = await submit(email);
        answers.push([response.statusCode, response.headers.location, visitor.cookie('wagw_session'), response.body]);
        assert.equal((await test.gateway.team.listOpenInvites(team.accountId)).length, 1, 'a taken email leaves the invite usable');
      }
      const fresh = await submit('fresh@acme.test');
      const freshAnswer = [
        fresh.response.statusCode,
        fresh.response.headers.location,
        fresh.visitor.cookie('wagw_session'),
        fresh.response.body,
      ];
      for (const answer of answers) assert.deepEqual(answer, freshAnswer, 'a registered email is answered like a new one');
      assert.equal((await test.gateway.team.listOpenInvites(team.accountId)).length, 0, 'the new email used the invite');
      const users = await test.gateway.accounts.listUsers(accountScope(team.accountId));
      assert.ok(!users.some((user) => user.email === other.member.email), 'the taken email did not join');
    });

    it('throttles invite submissions from one address, with Retry-After, and not other addresses', async () => {
      const team = await createTeam(test, 'Acme');
      const { token } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id);
      const from = (address: string) => new DashboardClient(test, { 'x-forwarded-for': address });
      const prober = from('198.51.100.66');
      await prober.get(`/invite/${token}`);
      let last: Awaited<ReturnType<typeof prober.post>> | undefined;
      for (let submission = 0; submission <= SIGN_IN_LIMITS.failuresPerAddress; submission += 1) {
        last = await prober.post(`/invite/${token}`, { email: `probe${submission}@acme.test`, password: 'short' });
      }
      assert.equal(last!.statusCode, 429);
      assert.match(last!.body, /Too many invite submissions/);
      assert.ok(Number(last!.headers['retry-after']) > 0);
      const elsewhere = from('198.51.100.67');
      await elsewhere.get(`/invite/${token}`);
      assert.equal(
        (await elsewhere.post(`/invite/${token}`, { email: 'real@acme.test', password: 'a long new password' })).statusCode,
        303,
      );
    });

    it('signs out whoever was signed in on the browser when an invite is accepted', async () => {
      const team = await createTeam(test, 'Acme');
      const other = await createTeam(test, 'Beta');
      const browser = await signedIn(test, other.member);
      const previousToken = browser.cookie('wagw_session')!;
      const { token } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id);
      const page = await browser.get(`/invite/${token}`);
      assert.ok(page.body.includes(`You are signed in as ${other.member.email}`));
      const joined = await browser.post(`/invite/${token}`, { email: 'switch@acme.test', password: 'a long new password' });
      assert.equal(joined.statusCode, 303);
      assert.equal(await test.gateway.signIn.resume(previousToken), undefined, 'the earlier session is ended');
      assert.equal((await browser.signIn('switch@acme.test', 'a long new password')).statusCode, 303);
      assert.match((await browser.get('/')).body, /switch@acme\.test · Acme/);
    });

    it('answers 404 for an expired or unknown invite link', async () => {
      const team = await createTeam(test, 'Acme');
      const { token } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id, new Date(Date.now() - 8 * DAY_MS));
      const visitor = new DashboardClient(test);
      const expired = await visitor.get(`/invite/${token}`);
      assert.equal(expired.statusCode, 404);
      assert.match(expired.body, /It may have expired or been used/);
      await visitor.get('/login'); // a form token, as a tab opened before the link expired would hold
      const joinExpired = await visitor.post(`/invite/${token}`, { email: 'late@acme.test', password: 'a long new password' });
      assert.equal(joinExpired.statusCode, 404);
      assert.equal((await new DashboardClient(test).get('/invite/not-a-real-token')).statusCode, 404);
      assert.equal((await test.gateway.accounts.listUsers(accountScope(team.accountId))).length, 3);
    });

    it('refuses invites, role changes, removal and revoking to admins and members, and changes nothing', async () => {
      const team = await createTeam(test, 'Acme');
      const { invite } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id);
      for (const user of [team.admin, team.member]) {
        const client = await signedIn(test, user);
        await client.get('/team');
        const attempts = [
          await client.post('/team/invites', { role: 'owner' }),
          await client.post(`/team/${team.member.id}/role`, { role: 'owner' }),
          await client.post(`/team/${team.owner.id}/remove`, {}),
          await client.post(`/team/invites/${invite.id}/revoke`, {}),
        ];
        for (const response of attempts) {
          assert.equal(response.statusCode, 403);
          assert.match(response.body, /Only owners can manage the team/);
        }
      }
      const users = await test.gateway.accounts.listUsers(accountScope(team.accountId));
      assert.deepEqual(users.map((user) => user.role).sort(), ['admin', 'member', 'owner']);
      const invites = await test.gateway.team.listOpenInvites(team.accountId);
      assert.deepEqual(
        invites.map((open) => open.id),
        [invite.id],
      );
    });

    it('lets the owner change roles, remove a member (ending their sessions) and revoke an invite', async () => {
      const team = await createTeam(test, 'Acme');
      const owner = await signedIn(test, team.owner);
      const member = await signedIn(test, team.member);

      const promoted = await owner.submit('/team', `/team/${team.admin.id}/role`, { role: 'owner' });
      assert.equal(promoted.statusCode, 303);
      assert.equal((await test.gateway.accounts.getUser(team.admin.id)).role, 'owner');
      assert.match((await owner.get('/team')).body, /The role is changed\./);

      const removed = await owner.submit('/team', `/team/${team.member.id}/remove`, {});
      assert.equal(removed.statusCode, 303);
      await assert.rejects(test.gateway.accounts.getUser(team.member.id), /There is no user/);
      assert.equal((await member.get('/')).statusCode, 303, 'the removed user is signed out');
      // Each change is an audit row naming the owner who made it (ADR 0053, 0069).
      const rows = await test.gateway.audit.list(operatorScope(), { accountId: team.accountId, limit: 2 });
      assert.deepEqual(
        rows.map((row) => [row.action, row.targetId, row.actor.kind, row.actor.id, row.details]),
        [
          ['user.removed', team.member.id, 'user', team.owner.id, { email: team.member.email, role: 'member' }],
          ['user.role_changed', team.admin.id, 'user', team.owner.id, { email: team.admin.email, from: 'admin', to: 'owner' }],
        ],
      );

      const { invite } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id);
      const revoked = await owner.submit('/team', `/team/invites/${invite.id}/revoke`, {});
      assert.equal(revoked.statusCode, 303);
      assert.equal((await test.gateway.team.listOpenInvites(team.accountId)).length, 0);
      const [revokedRow] = await test.gateway.audit.list(operatorScope(), { accountId: team.accountId, limit: 1 });
      assert.deepEqual([revokedRow?.action, revokedRow?.targetId, revokedRow?.actor.id], ['invite.revoked', invite.id, team.owner.id]);
    });

    it('keeps the last owner: demoting them answers 409, and nobody removes themselves', async () => {
      const team = await createTeam(test, 'Acme');
      const owner = await signedIn(test, team.owner);
      const demoted = await owner.submit('/team', `/team/${team.owner.id}/role`, { role: 'admin' });
      assert.equal(demoted.statusCode, 409);
      assert.match(demoted.body, /role="alert"[^>]*>An account needs at least one owner/);
      const selfRemoval = await owner.submit('/team', `/team/${team.owner.id}/remove`, {});
      assert.equal(selfRemoval.statusCode, 400);
      assert.match(selfRemoval.body, /You cannot remove yourself/);
      assert.equal((await test.gateway.accounts.getUser(team.owner.id)).role, 'owner');
      const badRole = await owner.submit('/team', `/team/${team.member.id}/role`, { role: 'emperor' });
      assert.equal(badRole.statusCode, 400);
      assert.equal((await test.gateway.accounts.getUser(team.member.id)).role, 'member');
    });

    it("answers 404 when an owner reaches for another account's users or invites by id", async () => {
      const teamA = await createTeam(test, 'Acme');
      const teamB = await createTeam(test, 'Beta');
      const { invite } = await test.gateway.team.createInvite(teamB.accountId, 'member', teamB.owner.id);
      const ownerA = await signedIn(test, teamA.owner);
      const role = await ownerA.submit('/team', `/team/${teamB.member.id}/role`, { role: 'owner' });
      assert.equal(role.statusCode, 404);
      const remove = await ownerA.submit('/team', `/team/${teamB.member.id}/remove`, {});
      assert.equal(remove.statusCode, 404);
      const revoke = await ownerA.submit('/team', `/team/invites/${invite.id}/revoke`, {});
      assert.equal(revoke.statusCode, 404);
      assert.equal((await test.gateway.accounts.getUser(teamB.member.id)).role, 'member');
      assert.equal((await test.gateway.team.listOpenInvites(teamB.accountId)).length, 1);
      assert.ok(!(await ownerA.get('/team')).body.includes(teamB.member.email), 'the team page lists only its own account');
    });

    it('keeps an owner when two owners demote each other at the same moment', async () => {
      const team = await createTeam(test, 'Duel');
      const second = (
        await createTestUser(test.gateway, {
          accountId: team.accountId,
          email: `second-${team.accountId}@duel.test`,
          password: PASSWORD,
          role: 'owner',
        })
      ).user;
      const outcomes = await Promise.allSettled([
        test.gateway.team.changeRole(team.accountId, second.id, 'member'),
        test.gateway.team.changeRole(team.accountId, team.owner.id, 'member'),
      ]);
      assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1, 'exactly one demotion applies');
      const rejected = outcomes.find((outcome) => outcome.status === 'rejected');
      assert.equal((rejected?.reason as { code?: string } | undefined)?.code, 'last_owner');
      const owners = (await test.gateway.accounts.listUsers(accountScope(team.accountId))).filter((user) => user.role === 'owner');
      assert.equal(owners.length, 1);
    });

    it('does not let an account owner remove a gateway operator who belongs to the account', async () => {
      const team = await createTeam(test, 'Hosted');
      const operator = (
        await createTestUser(test.gateway, {
          accountId: team.accountId,
          email: `op-${team.accountId}@hosted.test`,
          password: PASSWORD,
          role: 'member',
          isOperator: true,
        })
      ).user;
      const owner = await signedIn(test, team.owner);
      const response = await owner.submit('/team', `/team/${operator.id}/remove`, {});
      assert.equal(response.statusCode, 403);
      assert.ok(await test.gateway.accounts.getUser(operator.id), 'the operator still exists');
    });

    it('keeps invite links out of the request log', async () => {
      const team = await createTeam(test, 'Quiet');
      const { token } = await test.gateway.team.createInvite(team.accountId, 'member', team.owner.id);
      const spellings = [
        `/invite/${token}`,
        `/%69nvite/${token}`,
        `/INVITE/${token}`,
        `/invite/${token}/`,
        `/invite/${token}?x=1`,
        `//invite/${token}`,
        `/invite/${encodeURIComponent(token).replace(/-/g, '%2D')}`,
      ];
      const before = test.logLines.length;
      for (const path of spellings) await new DashboardClient(test).get(path);
      const lines = test.logLines.slice(before).filter((line) => line.includes('"msg":"request"'));
      assert.ok(lines.length >= spellings.length, 'every request was logged');
      for (const line of lines) assert.ok(!line.includes(token.slice(4, 30)), `the token is not in the log: ${line}`);
    });
  });
}
