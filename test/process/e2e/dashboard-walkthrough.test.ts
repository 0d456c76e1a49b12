import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { API_KEY_PATTERN } from '../../../src/domain/api-key.ts';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { samples } from '../../support/media-samples.ts';
import { browserTestConfig, launchChromium, saveScreenshot } from '../../support/browser.ts';
import { CONDITION_WAIT_MS } from '../../support/waiting.ts';

const OPERATOR = { email: 'operator@walkthrough.test', password: 'operator password 1' };
const OWNER = { email: 'owner@walkthrough.test', password: 'owner password 123' };

for (const dialect of dialects) {
  describe(`the dashboard walk-through in Chromium (${dialect})`, () => {
    let database: TestDatabase;
    let gateway: Gateway;
    let server: RunningServer;
    let receiver: WebhookReceiver;
    let browser: Browser;
    let page: Page;
    let baseUrl: string;
    const numberPhone = uniquePhone();
    let apiKey = '';

    before(async () => {
      database = await createTestDatabase(dialect);
      const config = browserTestConfig(database.url, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' });
      gateway = await createGateway(config, createLogger(config));
      // What `wagw serve` does on a first start, with the password given instead of generated.
      await gateway.accounts.ensureOperator(OPERATOR.email, OPERATOR.password);
      server = await startServer(gateway);
      baseUrl = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      receiver = await WebhookReceiver.start();
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      // Destructive buttons ask for confirmation; the walk-through says yes.
      page.on('dialog', (dialog) => void dialog.accept());
    });

    after(async () => {
      await browser?.close();
      await receiver?.close();
      server?.app.server.closeAllConnections();
      await server?.stop();
      await database?.drop();
    });

    async function signIn(email: string, password: string): Promise<void> {
      await page.goto(`${baseUrl}/`);
      assert.match(page.url(), /\/login/, 'signed out, / leads to the sign-in page');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForLoadState('load');
    }

    async function signOut(): Promise<void> {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/login/);
    }

    it('1. the operator signs in and creates an account, its owner and a sandbox number', async () => {
      await signIn(OPERATOR.email, OPERATOR.password);
      await page.waitForURL(/\/operator/);
      await page.getByLabel('Account name').fill('Walkthrough Co');
      await page.getByLabel('Plan').selectOption('pro');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(/\/operator\/accounts\/acc_/);

      await page.locator('#user-email').fill(OWNER.email);
      await page.locator('#user-role').selectOption('owner');
      await page.locator('#user-password').fill(OWNER.password);
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.waitForLoadState('load');
      assert.match(await page.content(), /owner@walkthrough\.test/);

      await page.getByLabel('Phone number').fill(numberPhone);
      await page.getByRole('button', { name: 'Add number' }).click();
      await page.waitForLoadState('load');
      assert.ok(await page.getByText(numberPhone).first().isVisible(), 'the number is listed');
      await saveScreenshot(page, `${dialect}-operator-account`);
      await signOut();
    });

    it('2. the owner signs in, creates an API key and reads it from the page', async () => {
      await signIn(OWNER.email, OWNER.password);
      assert.match(await page.locator('h1').first().innerText(), /Walkthrough Co/);
      await saveScreenshot(page, `${dialect}-overview`);
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByLabel('Key name').fill('walk-through');
      await page.getByRole('button', { name: 'Create key' }).click();
      apiKey = await page.locator('#new-api-key').inputValue();
      assert.match(apiKey, API_KEY_PATTERN);
      // Granted for this origin only, so that the copy button can be checked through the clipboard.
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), apiKey, 'the copy button copies the key');
      await saveScreenshot(page, `${dialect}-api-key-created`);
    });

    it('3. the key sends a message through the public API', async () => {
      const response = await fetch(`${baseUrl}/send_message`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from_phone: numberPhone, to_phone: '+14155550100', message: 'Hello from the walk-through' }),
      });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { status: string }).status, 'sent');
    });

    it('4. the owner adds a webhook, simulates an incoming message and sees the delivery and its attempt', async () => {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('link', { name: 'New webhook' }).click();
      await page.getByLabel('Endpoint URL').fill(receiver.url('/walkthrough'));
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.waitForURL(/\/webhooks\/wh_/);
      const webhookPage = page.url();

      await page.getByRole('link', { name: 'Numbers' }).click();
      await page.getByLabel('From phone').fill('+14155550123');
      await page.getByLabel('Message').fill('Hi, is my order on its way?');
      await page.getByRole('button', { name: 'Simulate incoming message' }).click();
      await page.waitForLoadState('load');
      await saveScreenshot(page, `${dialect}-numbers`);

      // The status badge follows the session without a reload (app.js polls status.json).
      const badge = page.locator('[data-status-source] .badge').first();
      assert.equal((await badge.innerText()).trim(), 'connected');
      const since = await page.locator('[data-status-since] time').first().getAttribute('datetime');
      await gateway.numbers.setSimulatedStatus(operatorScope(), numberPhone, 'disconnected');
      // Locators run outside the page's CSP; a string predicate would be refused by it, rightly.
      await page.locator('[data-status-source] .badge', { hasText: 'disconnected' }).waitFor({ timeout: CONDITION_WAIT_MS });
      // The health card's "Status since" follows the change too.
      const changed = (await gateway.numbers.findNumber(operatorScope(), numberPhone)).statusChangedAt.toISOString();
      assert.notEqual(changed, since);
      await page.locator(`[data-status-since] time[datetime="${changed}"]`).waitFor({ timeout: CONDITION_WAIT_MS });
      await gateway.numbers.setSimulatedStatus(operatorScope(), numberPhone, 'connected');

      const [delivered] = await receiver.waitForRequests(1, (request) => request.body.includes('is my order on its way'));
      assert.ok(delivered, 'the receiver got the incoming message');

      // The attempt is logged just after the receiver answers; reload until the log shows it.
      let log = '';
      for (let tries = 0; tries < 50; tries += 1) {
        await page.goto(webhookPage);
        log = await page.locator('body').innerText();
        if (/delivered/i.test(log) && /\b200\b/.test(log)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.match(log, /Delivery log/);
      assert.match(log, /delivered/i, 'the delivery succeeded');
      assert.match(log, /\b200\b/, 'its attempt shows the status code');
      await saveScreenshot(page, `${dialect}-webhook-delivery-log`);

      await page.getByRole('link', { name: 'Messages' }).click();
      assert.match(await page.locator('main').innerText(), /Hello from the walk-through/);
      await saveScreenshot(page, `${dialect}-messages`);
    });

    it('4b. the owner simulates a photo from the form, and the Messages page shows its thumbnail', async () => {
      await page.getByRole('link', { name: 'Numbers' }).click();
      await page.getByLabel('From phone').fill('+14155550124');
      await page.getByLabel('Message').fill('Here is the parcel');
      await page.getByLabel('File (optional)').setInputFiles({ name: 'parcel.png', mimeType: 'image/png', buffer: samples.png });
      await page.getByRole('button', { name: 'Simulate incoming message' }).click();
      await page.waitForLoadState('load');
      assert.match(await page.locator('main').innerText(), /The simulated message arrived\./);
      await page.getByRole('link', { name: 'Messages' }).click();
      const thumbnail = page.locator('main img').first();
      await thumbnail.waitFor();
      // The thumbnail is served through the session and decodes as the PNG that was chosen.
      const naturalWidth = () =>
        thumbnail.evaluate((image) => (image as unknown as { complete: boolean; naturalWidth: number }).naturalWidth);
      for (let tries = 0; tries < 50 && (await naturalWidth()) === 0; tries += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(await naturalWidth(), 1, 'the 1-pixel PNG decoded');
      await saveScreenshot(page, `${dialect}-messages-with-photo`);
    });

    it('5. the owner revokes the key and the API answers 401 at once', async () => {
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('button', { name: 'Revoke' }).first().click();
      await page.waitForLoadState('load');
      assert.match(await page.locator('main').innerText(), /revoked/i);
      const response = await fetch(`${baseUrl}/send_message`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from_phone: numberPhone, to_phone: '+14155550100', message: 'after revocation' }),
      });
      assert.equal(response.status, 401);
      await saveScreenshot(page, `${dialect}-api-key-revoked`);
    });

    it('fits a phone screen without sideways scrolling', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      for (const path of ['/', '/numbers', '/keys']) {
        await page.goto(`${baseUrl}${path}`);
        const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        assert.ok(Number(overflow) <= 0, `${path} is ${String(overflow)} px too wide on a phone`);
      }
      await page.goto(`${baseUrl}/`);
      await saveScreenshot(page, `${dialect}-overview-phone`);
    });
  });
}
