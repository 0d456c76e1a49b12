import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FREE_FAILURES_PER_PAIR, SIGN_IN_LIMITS } from '../../../src/accounts/sign-in-throttle.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const PASSWORD = 'correct horse battery';

for (const dialect of dialects) {
  describe(`dashboard sessions and sign-in security (${dialect})`, () => {
    let test: TestGateway;
    let accountId: string;
    let emailCounter = 0;

    async function newUser(role: 'owner' | 'admin' | 'member' = 'owner'): Promise<string> {
      emailCounter += 1;
      const email = `user${emailCounter}@sessions.test`;
      await createTestUser(test.gateway, { accountId, email, password: PASSWORD, role });
      return email;
    }

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_TRUST_PROXY: 'true' });
      accountId = (await test.gateway.accounts.createAccount({ name: 'Sessions Ltd', plan: 'starter' })).id;
    });
    after(() => test.close());

    it('gives one generic message for an unknown email and for a wrong password', async () => {
      const email = await newUser();
      const unknown = await new DashboardClient(test).signIn('nobody@sessions.test', PASSWORD);
      const wrong = await new DashboardClient(test).signIn(email, 'not the password');
      assert.equal(unknown.statusCode, 401);
      assert.equal(wrong.statusCode, 401);
      const message = (body: string) => /role="alert">([^<]*)</.exec(body)?.[1];
      assert.equal(message(unknown.body), 'The email or password is incorrect.');
      assert.equal(message(wrong.body), message(unknown.body));
    });

    it('makes the guessing address wait after repeated wrong passwords, even when the right one follows', async () => {
      const email = await newUser();
      const guesser = { 'x-forwarded-for': '198.51.100.40' };
      for (let failure = 0; failure < FREE_FAILURES_PER_PAIR; failure += 1) {
        assert.equal((await new DashboardClient(test, guesser).signIn(email, `wrong ${failure}`)).statusCode, 401);
      }
      const blocked = await new DashboardClient(test, guesser).signIn(email, PASSWORD);
      assert.equal(blocked.statusCode, 429);
      assert.match(blocked.body, /Too many failed sign-ins\. Try again in \d+ (seconds|minutes)\./);
      assert.ok(Number(blocked.headers['retry-after']) > 0, 'Retry-After says how long');
      assert.equal(
        blocked.cookies.find((cookie) => cookie.name === 'wagw_session'),
        undefined,
      );
    });

    it('a correct password from an address that has not failed signs in while someone else hammers the account', async () => {
      const email = await newUser();
      const hammerer = { 'x-forwarded-for': '198.51.100.41' };
      for (let failure = 0; failure < FREE_FAILURES_PER_PAIR + 10; failure += 1)
        await new DashboardClient(test, hammerer).signIn(email, `guess ${failure}`);
      assert.equal((await new DashboardClient(test, hammerer).signIn(email, PASSWORD)).statusCode, 429, 'the hammerer is held');
      const owner = new DashboardClient(test, { 'x-forwarded-for': '192.0.2.41' });
      assert.equal((await owner.signIn(email, PASSWORD)).statusCode, 303, 'the owner, elsewhere, signs in');
    });

    it('refuses an email over 254 characters before counting or storing anything', async () => {
      const rows = async () => (await test.gateway.store.db.selectFrom('sign_in_failures').select('throttle_key').execute()).length;
      const before = await rows();
      const long = `${'x'.repeat(4_000)}@sessions.test`;
      const response = await new DashboardClient(test, { 'x-forwarded-for': '198.51.100.42' }).signIn(long, 'whatever');
      assert.equal(response.statusCode, 400);
      assert.match(response.body, /at most 254 characters/);
      assert.ok(!response.body.includes('x'.repeat(300)), 'the page does not echo the oversized email');
      // Larger still, the form's own size limit answers before the sign-in code runs at all.
      const huge = await new DashboardClient(test, { 'x-forwarded-for': '198.51.100.42' }).signIn(
        `${'x'.repeat(64 * 1024)}@sessions.test`,
        'whatever',
      );
      assert.ok(huge.statusCode === 400 || huge.statusCode === 413, String(huge.statusCode));
      assert.equal(await rows(), before, 'nothing was stored');
    });

    it('throttles one address spraying many emails, however it forges X-Forwarded-For, and not other addresses', async () => {
      const sprayer = { 'x-forwarded-for': '203.0.113.77' };
      for (let failure = 0; failure < SIGN_IN_LIMITS.failuresPerAddress; failure += 1) {
        const client = new DashboardClient(test);
        await client.get('/login');
        // Only the one trusted proxy hop is believed, so a forged first entry changes nothing.
        const forged = { 'x-forwarded-for': `198.51.100.${failure}, 203.0.113.77` };
        const response = await test.inject({
          method: 'POST',
          url: '/login',
          headers: { ...forged, 'content-type': 'application/x-www-form-urlencoded', cookie: `wagw_csrf=${client.cookie('wagw_csrf')}` },
          payload: new URLSearchParams({ _csrf: client.csrfToken!, email: `spray${failure}@sessions.test`, password: 'guess' }).toString(),
        });
        assert.equal(response.statusCode, 401);
      }
      const email = await newUser();
      const client = new DashboardClient(test);
      await client.get('/login');
      const fromSprayer = await test.inject({
        method: 'POST',
        url: '/login',
        headers: { ...sprayer, 'content-type': 'application/x-www-form-urlencoded', cookie: `wagw_csrf=${client.cookie('wagw_csrf')}` },
        payload: new URLSearchParams({ _csrf: client.csrfToken!, email, password: PASSWORD }).toString(),
      });
      assert.equal(fromSprayer.statusCode, 429);
      assert.equal((await new DashboardClient(test).signIn(email, PASSWORD)).statusCode, 303, 'another address signs in');
    });

    it('holds the pair limit against a burst of parallel guesses', async () => {
      const email = await newUser();
      const clients = await Promise.all(
        Array.from({ length: 12 }, async () => {
          // Its own address, so that the burst does not use up the address limit of other tests.
          const client = new DashboardClient(test, { 'x-forwarded-for': '192.0.2.12' });
          await client.get('/login');
          return client;
        }),
      );
      const responses = await Promise.all(clients.map((client, index) => client.post('/login', { email, password: `guess ${index}` })));
      const checked = responses.filter((response) => response.statusCode === 401).length;
      assert.equal(checked, FREE_FAILURES_PER_PAIR, 'only the allowed number of guesses had their password checked');
      assert.equal(responses.filter((response) => response.statusCode === 429).length, 12 - FREE_FAILURES_PER_PAIR);
    });

    it('refuses a sign-in form without its CSRF token', async () => {
      const email = await newUser();
      const client = new DashboardClient(test);
      await client.get('/login');
      const response = await client.post('/login', { email, password: PASSWORD }, { csrf: false });
      assert.equal(response.statusCode, 403);
      assert.equal(client.cookie('wagw_session'), undefined);
    });

    it('rotates the session at sign-in: a planted token is ignored and the token held before dies', async () => {
      const email = await newUser();
      const client = new DashboardClient(test);
      await client.get('/login');
      client.setCookie('wagw_session', 'planted-by-someone-else');
      await client.post('/login', { email, password: PASSWORD });
      const first = client.cookie('wagw_session')!;
      assert.notEqual(first, 'planted-by-someone-else');
      // Signing in again from a signed-in page replaces the session rather than reusing it.
      await client.get('/');
      await client.post('/login', { email, password: PASSWORD });
      const second = client.cookie('wagw_session')!;
      assert.notEqual(second, first);
      assert.equal(await test.gateway.signIn.resume(first), undefined);
      assert.ok(await test.gateway.signIn.resume(second));
    });

    it('ends a session after the idle timeout and after the absolute timeout', async () => {
      const email = await newUser();
      const config = test.gateway.config.dashboard;
      const idle = await test.gateway.signIn.signIn({ email, password: PASSWORD, ip: '127.0.0.1', userAgent: undefined });
      const start = idle.session.createdAt.getTime();
      assert.ok(await test.gateway.signIn.resume(idle.token, new Date(start + config.sessionIdleTimeoutMs - 1_000)));
      const later = start + config.sessionIdleTimeoutMs - 1_000 + config.sessionIdleTimeoutMs + 1_000;
      assert.equal(await test.gateway.signIn.resume(idle.token, new Date(later)), undefined, 'idle too long');

      // Background polling reads the session without keeping it alive.
      const polled = await test.gateway.signIn.signIn({ email, password: PASSWORD, ip: '127.0.0.1', userAgent: undefined });
      const polledStart = polled.session.createdAt.getTime();
      assert.ok(
        await test.gateway.signIn.resume(polled.token, new Date(polledStart + config.sessionIdleTimeoutMs - 1_000), { touch: false }),
      );
      assert.equal(await test.gateway.signIn.resume(polled.token, new Date(polledStart + config.sessionIdleTimeoutMs + 1_000)), undefined);

      const busy = await test.gateway.signIn.signIn({ email, password: PASSWORD, ip: '127.0.0.1', userAgent: undefined });
      let at = busy.session.createdAt.getTime();
      // Active every half idle-period, the session still ends at the absolute limit.
      while (at + config.sessionIdleTimeoutMs / 2 < start + config.sessionAbsoluteTimeoutMs) {
        at += config.sessionIdleTimeoutMs / 2;
        assert.ok(await test.gateway.signIn.resume(busy.token, new Date(at)), 'still active');
      }
      assert.equal(
        await test.gateway.signIn.resume(busy.token, new Date(busy.session.createdAt.getTime() + config.sessionAbsoluteTimeoutMs + 1)),
        undefined,
      );
    });

    it('signs out: the cookie is cleared and the session no longer opens pages', async () => {
      const email = await newUser();
      const client = new DashboardClient(test);
      await client.signIn(email, PASSWORD);
      const token = client.cookie('wagw_session')!;
      await client.get('/');
      const response = await client.post('/logout', {});
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, '/login');
      assert.equal(client.cookie('wagw_session'), undefined);
      assert.equal(await test.gateway.signIn.resume(token), undefined);
      assert.equal((await client.get('/')).statusCode, 303);
    });

    it('changes the password, keeps this session and ends the others', async () => {
      const email = await newUser();
      const here = new DashboardClient(test);
      const elsewhere = new DashboardClient(test);
      await here.signIn(email, PASSWORD);
      await elsewhere.signIn(email, PASSWORD);
      const wrongCurrent = await here.submit('/account/password', '/account/password', {
        current_password: 'nope',
        new_password: 'a brand new password',
      });
      assert.equal(wrongCurrent.statusCode, 400);
      assert.match(wrongCurrent.body, /The current password is incorrect\./);
      const changed = await here.submit('/account/password', '/account/password', {
        current_password: PASSWORD,
        new_password: 'a brand new password',
      });
      assert.equal(changed.statusCode, 303);
      assert.equal((await here.get('/')).statusCode, 200);
      assert.equal((await elsewhere.get('/')).statusCode, 303, 'the other session is over');
      assert.equal((await new DashboardClient(test).signIn(email, 'a brand new password')).statusCode, 303);
    });

    it('uses a __Host- Secure cookie when served over HTTPS', async () => {
      const email = await newUser();
      const page = await test.inject({ method: 'GET', url: '/login', headers: { 'x-forwarded-proto': 'https' } });
      const csrfCookie = page.cookies.find((cookie) => cookie.name === 'wagw_csrf')!;
      assert.equal(csrfCookie.secure, true);
      const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      const response = await test.inject({
        method: 'POST',
        url: '/login',
        headers: {
          'x-forwarded-proto': 'https',
          'content-type': 'application/x-www-form-urlencoded',
          cookie: `wagw_csrf=${csrfCookie.value}`,
        },
        payload: new URLSearchParams({ _csrf: token, email, password: PASSWORD }).toString(),
      });
      assert.equal(response.statusCode, 303);
      const session = response.cookies.find((cookie) => cookie.name === '__Host-wagw_session');
      assert.ok(session, 'the __Host- cookie is set');
      assert.equal(session.secure, true);
      assert.equal(session.path, '/');
      assert.equal(session.domain, undefined);
      assert.equal(
        response.cookies.find((cookie) => cookie.name === 'wagw_session'),
        undefined,
      );
    });

    it('follows only same-site paths after sign-in', async () => {
      const email = await newUser();
      const client = new DashboardClient(test);
      await client.get('/login?next=//evil.example/steal');
      const response = await client.post('/login', { email, password: PASSWORD, next: '//evil.example/steal' });
      assert.equal(response.headers.location, '/');
      for (const crafted of ['/\t/evil.example', '/\\evil.example', '/\n/evil.example', 'https://evil.example/']) {
        const client = new DashboardClient(test);
        await client.get('/login');
        const crafty = await client.post('/login', { email, password: PASSWORD, next: crafted });
        assert.equal(crafty.headers.location, '/', `${JSON.stringify(crafted)} does not leave the site`);
      }
      const inside = new DashboardClient(test);
      await inside.get('/login?next=%2Fmessages');
      assert.equal((await inside.post('/login', { email, password: PASSWORD, next: '/messages' })).headers.location, '/messages');
    });

    it('a signed-in visit to /login never redirects off the site, whatever dot segments or backslashes next holds', async () => {
      const email = await newUser();
      const client = new DashboardClient(test);
      await client.signIn(email, PASSWORD);
      const crafted = [
        '/.//evil.example',
        '/..//evil.example',
        '/%2e//evil.example',
        '/a/..//evil.example',
        '/%2e%2e//evil.example',
        '/./\\evil.example',
        '/.\\/evil.example',
        '/\\\\evil.example',
        '/a/../\\evil.example',
        '\\\\evil.example',
        '/.//\\evil.example',
      ];
      for (const next of crafted) {
        const response = await client.get(`/login?next=${encodeURIComponent(next)}`);
        assert.equal(response.statusCode, 303, next);
        const location = String(response.headers.location);
        // A browser reads "\\" as "/" in a path, so both spellings are checked.
        assert.doesNotMatch(location.replace(/\\/g, '/'), /^\/\//, `${JSON.stringify(next)} led to ${location}`);
        assert.equal(
          new URL(location, 'https://gateway.example').origin,
          'https://gateway.example',
          `${JSON.stringify(next)} led to ${location}`,
        );
      }
      const ordinary = await client.get(`/login?next=${encodeURIComponent('/webhooks/../messages?page=2')}`);
      assert.equal(ordinary.headers.location, '/messages?page=2', 'a harmless dot segment still leads where it points');
    });

    it('serves pages under a strict Content-Security-Policy with no inline script or style', async () => {
      const email = await newUser();
      const client = new DashboardClient(test);
      await client.signIn(email, PASSWORD);
      const page = await client.get('/');
      const policy = String(page.headers['content-security-policy']);
      assert.match(policy, /default-src 'self'/);
      assert.match(policy, /script-src 'self'(;|$)/);
      assert.match(policy, /frame-ancestors 'none'/);
      assert.equal(page.headers['x-frame-options'], 'DENY', 'the older header agrees with frame-ancestors');
      assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script has a src');
      assert.doesNotMatch(page.body, /\sstyle=/);
      assert.doesNotMatch(page.body, /<style/);
    });

    it('leaves the public API exactly as it was: JSON only, no dashboard headers', async () => {
      const response = await test.inject({
        method: 'POST',
        url: '/send_message',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'from_phone=%2B1&to_phone=%2B2&message=hi',
      });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().error, 'missing_api_key');
      assert.equal(response.headers['content-security-policy'], undefined);
      const unknown = await test.inject({ method: 'GET', url: '/no/such/path' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().error, 'not_found');
    });
  });
}
