import { Readable } from 'node:stream';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { parseE164 } from '../../../src/domain/phone.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const PASSWORD = 'matrix password 1';

interface Route {
  method: 'GET' | 'POST';
  path: string;
}

// Routes that are not the signed-in dashboard: the public API (at /x and /api/x; its own matrix is
// test/integration/http/authorization-matrix.test.ts), its docs, and the pages anyone
// may open (sign-in, sign-out, invite links, assets), and the calls between nodes, which need the
// cluster key's signature and answer 404 without it (test/integration/cluster/forwarding.test.ts).
// /messages/:id, /check_numbers, /typing, /numbers/:id/pause, /numbers/:id/queue, /account/send_policy, /blocklist,
// /new_chat_quota, /presence, /contacts and /chats are the public API's alone (bearer keys), probed by test/integration/http/authorization-matrix.test.ts.
const OUTSIDE_THE_MATRIX = [
  /^\/internal\//,
  // Chatwoot's callbacks, authenticated by the inbox's token in the path (test/integration/chatwoot/chatwoot-replies.test.ts).
  /^\/chatwoot\/callbacks\//,
  // Meta's callbacks for Cloud API numbers, authenticated by the app secret's signature (test/integration/http/cloud-api.test.ts).
  /^\/cloud\/callbacks\//,
  // The operator API, behind operator tokens (test/integration/http/operator-api.test.ts).
  /^\/admin\//,
  /^\/media(\/|$)/,
  /^\/messages\/:id(\/(edit|revoke|read|cancel))?$/,
  /^\/numbers\/:id\/queue$/,
  /^\/account\/send_policy$/,
  /^\/send_reaction$/,
  /^\/groups(\/|$)/,
  /^\/numbers\/:id(\/pause)?$/,
  /^\/check_numbers$/,
  /^\/templates(\/|$)/,
  /^\/typing$/,
  /^\/blocklist(\/|$)/,
  /^\/new_chat_quota$/,
  /^\/presence\//,
  /^\/contacts(\/|$)/,
  /^\/chats(\/|$)/,
  /^\/docs/,
  /^\/health/,
  /send_message$/,
  /^\/sandbox\//,
  /^\/api\//,
  /^\/openapi\.json$/,
  /\*/,
  /^\/login$/,
  /^\/logout$/,
  /^\/invite\//,
  /^\/assets/,
];

/**
 * Every GET and POST route of the app, read from Fastify's route tree, without the routes
 * constrained to API callers (caller-constraint.ts): they are the public API's, probed by its own
 * matrix, though they share a path with the dashboard's.
 *
 * A node of the tree prints one line per route it holds: the first after its branch ("├── "), any
 * other below it at the same indentation, and each with its constraints as JSON after its methods.
 * Every line must be read, constrained or not, to keep the stack of parents right: skipping a node
 * whose only route is constrained (GET /webhooks/:id/deliveries) would give its children the path
 * of the sibling read before it.
 */
function allRoutes(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ├└─]*)(\S.*?) \(([A-Z, ]+)\)(?: (\{.*\}))?$/.exec(line);
    if (match === null) {
      // A line read wrongly would shift every path after it; a format not understood stops the test.
      if (line.trim() === '') continue;
      throw new Error(`The authorization matrix cannot read this line of Fastify's route tree: ${line}`);
    }
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const parent = stack.at(-1) ?? '';
    // Each line holds the rest of its path after its parent's, separator included ("/cancel",
    // ".json" and "-qr.svg" under "/link"), so the path is the plain concatenation.
    const path = `${parent}${match[2]}`;
    stack.push(path);
    const constraints = match[4] === undefined ? {} : (JSON.parse(match[4]) as { caller?: string });
    if (constraints.caller === 'api') continue;
    for (const method of match[3]!.split(', ')) {
      if (method === 'GET' || method === 'POST') routes.push({ method, path });
    }
  }
  return routes.filter((route) => !OUTSIDE_THE_MATRIX.some((pattern) => pattern.test(route.path)));
}

interface AccountObjects {
  accountId: string;
  ownerEmail: string;
  ownerId: string;
  memberId: string;
  numberId: string;
  phone: string;
  keyId: string;
  apiKey: string;
  webhookId: string;
  webhookUrl: string;
  deliveryId: string;
  inviteId: string;
  inviteToken: string;
  mediaId: string;
  /** Not an account's: the operator console's routes take it, and a non-operator must be refused them. */
  operatorTokenId: string;
}

async function seedTenant(test: TestGateway, name: string): Promise<AccountObjects> {
  const { gateway } = test;
  const accountId = (await gateway.accounts.createAccount({ name, plan: 'pro' })).id;
  const ownerEmail = `owner@${name}.test`;
  const owner = (await createTestUser(gateway, { accountId, email: ownerEmail, password: PASSWORD, role: 'owner' })).user;
  const member = (await createTestUser(gateway, { accountId, email: `member@${name}.test`, password: PASSWORD, role: 'member' })).user;
  const phone = uniquePhone();
  const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone, engine: 'sandbox' });
  const key = await gateway.apiKeys.createKey({ accountId, name: `${name} key` });
  const webhookUrl = `http://127.0.0.1:9/${name}-secret-path`;
  const { webhook } = await gateway.webhooks.createWebhook(accountScope(accountId), { url: webhookUrl, eventTypes: ['message'] });
  await gateway.webhooks.sendTestEvent(accountScope(accountId), webhook.id);
  const [delivery] = await gateway.webhooks.listDeliveries(accountScope(accountId), webhook.id);
  const invite = await gateway.team.createInvite(accountId, 'member', owner.id);
  await gateway.supervisor
    .simulatorFor(number)!
    .deliverIncoming(number, { fromPhone: parseE164('+14155550123')!, text: `private words of ${name}` });
  const media = await gateway.media.ingest(Readable.from([Buffer.from(`private file of ${name}`)]), { accountId, source: 'upload' });
  const operatorToken = await gateway.operatorTokens.create(`${name} operator token`);
  return {
    operatorTokenId: operatorToken.token.id,
    mediaId: media.id,
    accountId,
    ownerEmail,
    ownerId: owner.id,
    memberId: member.id,
    numberId: number.id,
    phone: number.phone,
    keyId: key.apiKey.id,
    apiKey: key.plaintext,
    webhookId: webhook.id,
    webhookUrl,
    deliveryId: delivery!.delivery.id,
    inviteId: invite.invite.id,
    inviteToken: invite.token,
  };
}

/** The concrete URLs that aim a route at `target`'s objects, one per combination worth trying. */
function urlsAimedAt(path: string, target: AccountObjects, own: AccountObjects): string[] {
  if (!path.includes(':')) return [path];
  const fill = (values: Record<string, string>) =>
    path.replace(/:(\w+)/g, (_whole, param: string) => {
      const value = values[param];
      if (value === undefined) throw new Error(`The authorization matrix does not know the parameter :${param} of ${path}; add it.`);
      return value;
    });
  if (path.startsWith('/team/invites/')) return [fill({ inviteId: target.inviteId })];
  if (path.startsWith('/team/')) return [fill({ userId: target.ownerId }), fill({ userId: target.memberId })];
  if (path.startsWith('/keys/')) return [fill({ id: target.keyId })];
  if (path.includes('/deliveries/')) {
    // Another account's delivery, through another account's webhook and through one's own.
    return [fill({ id: target.webhookId, deliveryId: target.deliveryId }), fill({ id: own.webhookId, deliveryId: target.deliveryId })];
  }
  if (path.startsWith('/webhooks/')) return [fill({ id: target.webhookId })];
  if (path.startsWith('/numbers/')) return [fill({ id: target.numberId })];
  if (path.startsWith('/messages/media/')) return [fill({ id: target.mediaId })];
  // The chat each tenant's sandbox number has with +14155550123 (seedTenant).
  if (path.startsWith('/conversations/')) return [fill({ numberId: target.numberId, chat: encodeURIComponent('+14155550123') })];
  if (path.startsWith('/operator/')) {
    return [fill({ accountId: target.accountId, userId: target.ownerId, numberId: target.numberId, tokenId: target.operatorTokenId })];
  }
  throw new Error(`The authorization matrix does not cover ${path}; add it.`);
}

// Every field any dashboard form reads, so that only authorization can stop the request.
const ANY_FORM = {
  role: 'owner',
  url: 'http://127.0.0.1:9/attacker-hook',
  event_types: ['message', 'message.status'],
  name: 'taken over',
  from_phone: '+14155550199',
  message: 'planted message',
  plan: 'enterprise',
  custom_monthly_limit: '1',
  email: 'intruder@attacker.test',
  password: 'intruder password',
  phone: '+14155550198',
  engine: 'sandbox',
  account_id: 'acc_00000000000000000000000000',
  operator: 'true',
  status: 'failed',
  current_password: PASSWORD,
  new_password: 'another password 1',
  reject_calls: 'on',
  call_reply_text: 'planted reply',
  send_policy: 'cautious',
};

for (const dialect of dialects) {
  describe(`authorization matrix: no route reaches another account (${dialect})`, () => {
    let test: TestGateway;
    let a: AccountObjects;
    let b: AccountObjects;
    let routes: Route[];

    before(async () => {
      // Webhooks point at a closed local port: the matrix never needs them to answer.
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' });
      a = await seedTenant(test, 'alpha');
      b = await seedTenant(test, 'bravo');
      routes = allRoutes(test.app);
    });
    after(() => test.close());

    it('finds the dashboard routes to check', () => {
      const paths = new Set(routes.map((route) => route.path));
      for (const expected of ['/keys/:id/revoke', '/webhooks/:id', '/numbers/:id/simulate', '/team/:userId/role', '/operator/accounts']) {
        assert.ok(paths.has(expected), `${expected} is in the matrix`);
      }
    });

    it("gives an owner of A a 404 for every route aimed at B's objects, and changes nothing of B", async () => {
      const secretBefore = await test.gateway.webhooks.revealSecret(accountScope(b.accountId), b.webhookId);
      const attemptsBefore = (await test.gateway.webhooks.getDelivery(accountScope(b.accountId), b.deliveryId)).attempts.length;
      const client = new DashboardClient(test);
      await client.signIn(a.ownerEmail, PASSWORD);
      const checked: string[] = [];
      for (const route of routes.filter((candidate) => candidate.path.includes(':') && !candidate.path.startsWith('/operator'))) {
        for (const url of urlsAimedAt(route.path, b, a)) {
          await client.get('/');
          const response = route.method === 'GET' ? await client.get(url) : await client.post(url, ANY_FORM);
          assert.equal(response.statusCode, 404, `${route.method} ${url} answers 404, got ${response.statusCode}`);
          for (const secret of [b.webhookUrl, b.ownerEmail, 'private words of bravo', secretBefore]) {
            assert.ok(!response.body.includes(secret), `${route.method} ${url} does not show B's data`);
          }
          checked.push(`${route.method} ${route.path}`);
        }
      }
      assert.ok(checked.length >= 12, `checked ${checked.length} route aims`);

      // B is untouched: its key works, its webhook, secret, users, invite, number and delivery stand.
      const sent = await test.post('/send_message', { from_phone: b.phone, to_phone: '+14155550100', message: 'still mine' }, b.apiKey);
      assert.equal(sent.statusCode, 200);
      const webhook = await test.gateway.webhooks.getWebhook(accountScope(b.accountId), b.webhookId);
      assert.equal(webhook.url, b.webhookUrl);
      assert.equal(webhook.enabled, true);
      assert.deepEqual(webhook.eventTypes, ['message']);
      assert.equal(await test.gateway.webhooks.revealSecret(accountScope(b.accountId), b.webhookId), secretBefore);
      const users = await test.gateway.accounts.listUsers(accountScope(b.accountId));
      assert.deepEqual(
        users.map((user) => [user.id, user.role]).sort(),
        [
          [b.ownerId, 'owner'],
          [b.memberId, 'member'],
        ].sort(),
      );
      assert.ok(await test.gateway.team.findUsableInvite(b.inviteToken));
      assert.equal((await test.gateway.numbers.findNumber(accountScope(b.accountId), b.numberId)).status, 'connected');
      assert.equal((await test.gateway.webhooks.getDelivery(accountScope(b.accountId), b.deliveryId)).attempts.length, attemptsBefore);
      const history = await test.gateway.history.page(accountScope(b.accountId), { limit: 50 });
      assert.ok(!history.messages.some((message) => message.text === 'planted message'), 'no message was planted in B');
    });

    it("opens the same routes for A's own objects (the 404s above are not broken routes)", async () => {
      const client = new DashboardClient(test);
      await client.signIn(a.ownerEmail, PASSWORD);
      for (const route of routes.filter(
        (candidate) => candidate.method === 'GET' && candidate.path.includes(':') && !candidate.path.startsWith('/operator'),
      )) {
        for (const url of urlsAimedAt(route.path, a, a)) {
          const response = await client.get(url);
          assert.equal(response.statusCode, 200, `GET ${url} opens for its own account`);
        }
      }
    });

    it('lists only A on the list pages', async () => {
      const client = new DashboardClient(test);
      await client.signIn(a.ownerEmail, PASSWORD);
      for (const route of routes.filter(
        (candidate) => candidate.method === 'GET' && !candidate.path.includes(':') && !candidate.path.startsWith('/operator'),
      )) {
        const response = await client.get(route.path);
        assert.ok(response.statusCode === 200 || response.statusCode === 303, `GET ${route.path} answers`);
        for (const secret of [b.webhookUrl, b.ownerEmail, 'private words of bravo', b.phone, b.keyId]) {
          assert.ok(!response.body.includes(secret), `GET ${route.path} shows nothing of B (${secret})`);
        }
      }
    });

    it('refuses every operator route to account users, owners included', async () => {
      for (const email of [a.ownerEmail, 'member@alpha.test']) {
        const client = new DashboardClient(test);
        await client.signIn(email, PASSWORD);
        for (const route of routes.filter((candidate) => candidate.path.startsWith('/operator'))) {
          for (const url of urlsAimedAt(route.path, a, a)) {
            await client.get('/');
            const response = route.method === 'GET' ? await client.get(url) : await client.post(url, ANY_FORM);
            assert.equal(response.statusCode, 403, `${route.method} ${url} is refused to ${email}, got ${response.statusCode}`);
          }
        }
      }
      assert.equal((await test.gateway.accounts.getAccount(a.accountId)).plan, 'pro', 'the plan was not changed');
    });

    it('sends a signed-out visitor of every dashboard route to the sign-in page', async () => {
      for (const route of routes) {
        for (const url of urlsAimedAt(route.path, a, a)) {
          const response = await test.inject({ method: route.method, url });
          const refused =
            response.statusCode === 303 ? response.headers.location?.toString().startsWith('/login') : response.statusCode === 403;
          assert.ok(refused, `${route.method} ${url} refuses a visitor, got ${response.statusCode}`);
        }
      }
    });
  });
}
