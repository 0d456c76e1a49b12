import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { operatorCaller } from '../../support/operator-api.ts';
import { createTestUser } from '../../support/users.ts';
import { waitForValue } from '../../support/waiting.ts';

/**
 * A `cloud` number's settings on its operator console page (docs/cloud-api.md), through the real
 * HTTP stack with the console's CSRF: set through the operator API's own service (sealed at rest,
 * an audit row naming the operator, the session started with them), shown with the secrets only as
 * set or not and the callback URL Meta is given, cleared, a bad value refused in the API's words
 * without echoing a secret, and every refusal changes nothing.
 */

const PASSWORD = 'correct horse battery';
const PUBLIC_URL = 'https://wa.example.test';
const SECRETS = { access_token: 'EAAG-console-token-1234', app_secret: 'console-app-secret-5678', verify_token: 'console-verify-9012' };
/** The refusal a page shows above its forms, as the browser reads it. */
function shownError(body: string): string | undefined {
  const escaped = /<p class="form-error" role="alert">([^<]*)<\/p>/.exec(body)?.[1];
  return escaped
    ?.replaceAll('&#34;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}
const GOOD = { phone_number_id: '106540352242922', business_account_id: '102290129340398', ...SECRETS };

for (const dialect of dialects) {
  describe(`a cloud number's settings in the operator console (${dialect})`, () => {
    let test: TestGateway;
    let operator: DashboardClient;
    let operatorToken: string;
    let accountId: string;
    let otherAccountId: string;
    const api = operatorCaller(
      () => test,
      () => operatorToken,
    );

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_PUBLIC_URL: PUBLIC_URL });
      accountId = (await test.gateway.accounts.createAccount({ name: 'Clouded' })).id;
      otherAccountId = (await test.gateway.accounts.createAccount({ name: 'Elsewhere' })).id;
      await createTestUser(test.gateway, {
        email: 'op@cloud-console.test',
        accountId: null,
        password: PASSWORD,
        isOperator: true,
        role: 'admin',
      });
      await createTestUser(test.gateway, { email: 'owner@cloud-console.test', accountId, password: PASSWORD, role: 'owner' });
      operatorToken = (await test.gateway.operatorTokens.create('cloud console', CLI_ACTOR)).plaintext;
      operator = new DashboardClient(test);
      assert.equal((await operator.signIn('op@cloud-console.test', PASSWORD)).statusCode, 303);
    });
    after(() => test.close());

    const cloudNumber = async (inAccount = accountId) => {
      const number = await test.gateway.numbers.addNumber(operatorScope(), { accountId: inAccount, phone: uniquePhone(), engine: 'cloud' });
      await test.gateway.supervisor.numberAdded();
      return number;
    };
    const pageOf = (number: WhatsAppNumber) => `/operator/numbers/${number.id}`;
    const actionOf = (number: WhatsAppNumber, account = number.accountId) => `/operator/accounts/${account}/numbers/${number.id}/cloud`;
    const storedRow = (number: WhatsAppNumber) =>
      test.gateway.store.db.selectFrom('cloud_numbers').selectAll().where('number_id', '=', number.id).executeTakeFirst();
    const auditOf = async (number: WhatsAppNumber) =>
      (await test.gateway.audit.list(operatorScope(), { accountId: number.accountId, limit: 50 })).filter(
        (row) => row.targetId === number.id && row.action.startsWith('number.cloud_settings'),
      );
    const noSecretIn = (body: string) => !Object.values(SECRETS).some((secret) => body.includes(secret));

    it('sets them sealed with an audit row naming the operator, shows them masked with the callback URL, and clears them', async () => {
      const number = await cloudNumber();
      const before = await operator.get(pageOf(number));
      assert.equal(before.statusCode, 200);
      assert.match(before.body, /<h2 id="cloud-heading">Cloud API<\/h2>/);
      assert.ok(!before.body.includes('id="link-heading"'), 'a cloud number is not linked by QR');
      assert.ok(before.body.includes(`<code id="cloud-callback">${PUBLIC_URL}/cloud/callbacks/${number.id}</code>`));
      assert.ok(!before.body.includes('Clear settings'), 'nothing to clear yet');

      const set = await operator.post(actionOf(number), GOOD);
      assert.equal(set.statusCode, 303, set.body);
      assert.equal(set.headers.location, `${pageOf(number)}#cloud`);

      const shown = await operator.get(pageOf(number));
      assert.match(shown.body, /The Cloud API settings are saved/);
      assert.match(shown.body, /<dt>Phone number id<\/dt>\s*<dd class="mono">106540352242922<\/dd>/);
      assert.match(shown.body, /<dt>Access token<\/dt>\s*<dd>set \(sealed, never shown\)<\/dd>/);
      assert.ok(noSecretIn(shown.body), 'no secret on the page');
      // The operator API reads back what the console set, masked the same way.
      const read = await api('GET', `/admin/accounts/${accountId}/numbers/${number.id}/cloud`);
      assert.deepEqual(read.json(), {
        number_id: number.id,
        phone_number_id: GOOD.phone_number_id,
        business_account_id: GOOD.business_account_id,
        access_token: '***',
        app_secret: '***',
        verify_token: '***',
        callback_path: `/cloud/callbacks/${number.id}`,
      });
      assert.ok(noSecretIn(JSON.stringify(await storedRow(number))), 'sealed at rest');
      await waitForValue(async () => {
        const now = await test.gateway.numbers.findNumber(operatorScope(), number.id);
        return test.gateway.supervisor.sessionStatus(now) === 'connected' ? true : undefined;
      }, 'the session to start again with its settings');

      const cleared = await operator.post(`${actionOf(number)}/clear`, {});
      assert.equal(cleared.statusCode, 303, cleared.body);
      assert.equal(await storedRow(number), undefined);
      assert.match((await operator.get(pageOf(number))).body, /<dt>Access token<\/dt>\s*<dd>not set<\/dd>/);
      const rows = await auditOf(number);
      assert.deepEqual(
        rows.map((row) => [row.action, row.actor.kind, row.actor.label, row.details?.phone_number_id]),
        [
          ['number.cloud_settings_cleared', 'user', 'op@cloud-console.test', undefined],
          ['number.cloud_settings_set', 'user', 'op@cloud-console.test', GOOD.phone_number_id],
        ],
      );
      assert.ok(noSecretIn(JSON.stringify(rows)), 'no secret in the audit rows');
    });

    it("refuses a bad value in the operator API's words, shows the ids typed escaped and no secret, and stores nothing", async () => {
      const number = await cloudNumber();
      await operator.get(pageOf(number));
      const attack = '"><script>alert(1)</script>';
      const bad = [
        { ...GOOD, phone_number_id: attack },
        { ...GOOD, business_account_id: '12 34' },
        { ...GOOD, access_token: 'short' },
        { ...GOOD, app_secret: 'has a space in it' },
        { ...GOOD, verify_token: 'x'.repeat(1025) },
      ];
      for (const body of bad) {
        const fromApi = await api('POST', `/admin/accounts/${accountId}/numbers/${number.id}/cloud`, body);
        assert.equal(fromApi.statusCode, 400, fromApi.body);
        const refused = await operator.post(actionOf(number), body);
        assert.equal(refused.statusCode, 400, refused.body);
        assert.equal(shownError(refused.body), fromApi.json().message);
        assert.ok(noSecretIn(refused.body) && !refused.body.includes('x'.repeat(1025)), 'no secret is shown again');
        assert.ok(!refused.body.includes('"><script>'), 'the id typed cannot leave its attribute');
      }
      const attacked = await operator.post(actionOf(number), bad[0]!);
      assert.ok(attacked.body.includes('id="cloud-phone-number-id"'));
      assert.match(
        attacked.body,
        /name="phone_number_id"[^>]*value="&#34;><script>alert\(1\)<\/script>"/,
        'shown again, its quote escaped',
      );
      assert.equal(await storedRow(number), undefined);
      assert.deepEqual(await auditOf(number), []);
    });

    it('refuses a form without its CSRF token, another account’s number, an unknown account and a non-operator, changing nothing', async () => {
      const number = await cloudNumber();
      await operator.get(pageOf(number));
      const noCsrf = await operator.post(actionOf(number), GOOD, { csrf: false });
      assert.equal(noCsrf.statusCode, 403);
      assert.match(noCsrf.body, /did not come from this dashboard/);
      assert.equal((await operator.post(actionOf(number, otherAccountId), GOOD)).statusCode, 404);
      assert.equal((await operator.post(`${actionOf(number, otherAccountId)}/clear`, {})).statusCode, 404);
      assert.equal((await operator.post(actionOf(number, 'acc_00000000000000000000000000'), GOOD)).statusCode, 404);
      const owner = new DashboardClient(test);
      assert.equal((await owner.signIn('owner@cloud-console.test', PASSWORD)).statusCode, 303);
      await owner.get('/');
      assert.equal((await owner.post(actionOf(number), GOOD)).statusCode, 403);
      assert.equal(await storedRow(number), undefined);
      assert.deepEqual(await auditOf(number), []);
    });

    it("adds a cloud number from its account's page, whose own page then offers the settings", async () => {
      const accountPage = `/operator/accounts/${accountId}`;
      assert.match((await operator.get(accountPage)).body, /<option value="cloud">Cloud API/);
      const phone = uniquePhone();
      assert.equal((await operator.post(`${accountPage}/numbers`, { phone, engine: 'cloud' })).statusCode, 303);
      const added = await test.gateway.numbers.findNumber(operatorScope(), phone);
      assert.equal(added.engine, 'cloud');
      const page = await operator.get(pageOf(added));
      assert.ok(page.body.includes(`action="${actionOf(added)}"`), 'the Cloud API form posts under its account');
    });

    it('shows no such form for a number on another engine, and refuses a post for it as the API does', async () => {
      const sandbox = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'sandbox' });
      const page = await operator.get(pageOf(sandbox));
      assert.equal(page.statusCode, 200);
      assert.ok(!page.body.includes('cloud-heading') && !page.body.includes('/cloud"'), 'no Cloud API form');
      const fromApi = await api('POST', `/admin/accounts/${accountId}/numbers/${sandbox.id}/cloud`, GOOD);
      const refused = await operator.post(actionOf(sandbox), GOOD);
      assert.equal(refused.statusCode, fromApi.statusCode);
      assert.equal(shownError(refused.body), fromApi.json().message);
      assert.equal(await storedRow(sandbox), undefined);
    });
  });
}
