import { operatorScope } from '../../../src/domain/tenant-scope.ts';
/**
 * The live QR in Chromium: the operator starts linking, and each QR WhatsApp offers replaces the
 * one on screen without a reload. WhatsApp's servers are fake sockets; the rest is real.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { RecordingSocketFactory } from '../../support/fake-whatsapp.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { browserTestConfig, launchChromium, saveScreenshot } from '../../support/browser.ts';
import { CONDITION_WAIT_MS } from '../../support/waiting.ts';

const OPERATOR = { email: 'operator@linking-browser.test', password: 'operator password 1' };
/** The page polls every two seconds; a busy machine gets a condition's whole wait. */
const POLL_WAIT_MS = CONDITION_WAIT_MS;

for (const dialect of dialects) {
  describe(`linking a number in Chromium (${dialect})`, () => {
    let database: TestDatabase;
    let gateway: Gateway;
    let server: RunningServer;
    let browser: Browser;
    let page: Page;
    let baseUrl: string;
    let number: WhatsAppNumber;
    const whatsapp = new RecordingSocketFactory();

    before(async () => {
      database = await createTestDatabase(dialect);
      const config = browserTestConfig(database.url);
      gateway = await createGateway(config, createLogger(config), { baileysSocketFactory: whatsapp.create });
      await gateway.accounts.ensureOperator(OPERATOR.email, OPERATOR.password);
      const account = await gateway.accounts.createAccount({ name: 'Linking in a browser' });
      number = await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: uniquePhone(), engine: 'baileys' });
      server = await startServer(gateway);
      baseUrl = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      browser = await launchChromium();
      page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    });

    after(async () => {
      await browser?.close();
      server?.app.server.closeAllConnections();
      await server?.stop();
      await database?.drop();
    });

    it('swaps in each new QR without a reload, and shows the outcome once the phone links', async () => {
      await page.goto(`${baseUrl}/login`);
      await page.getByLabel('Email').fill(OPERATOR.email);
      await page.getByLabel('Password').fill(OPERATOR.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/operator/);

      await page.goto(`${baseUrl}/operator/numbers/${number.id}`);
      await page.getByRole('button', { name: 'Link with a QR code' }).click();
      await page.waitForURL(/#link-panel$/);
      const socket = whatsapp.latest;
      // A marker on the window survives only as long as the page is not reloaded.
      await page.evaluate(() => Object.assign(globalThis, { samePage: true }));

      socket.emit('connection.update', { qr: 'first-qr-in-the-browser' });
      const qr = page.locator('#link-qr');
      const srcEndsWith = async (suffix: string) => {
        const deadline = Date.now() + POLL_WAIT_MS;
        while (!((await qr.getAttribute('src')) ?? '').endsWith(suffix)) {
          assert.ok(Date.now() < deadline, `the QR on the page never became ${suffix}`);
          await page.waitForTimeout(100);
        }
      };
      await srcEndsWith('v=1');
      assert.equal(await qr.isVisible(), true);
      const loaded = await qr.evaluate((image) => {
        const element = image as unknown as { complete: boolean; naturalWidth: number };
        return element.complete && element.naturalWidth > 0;
      });
      assert.equal(loaded, true, 'the SVG loads as an image under the CSP');
      await saveScreenshot(page, `linking-qr-${dialect}`);

      socket.emit('connection.update', { qr: 'second-qr-in-the-browser' });
      await srcEndsWith('v=2');
      assert.equal(await page.evaluate(() => (globalThis as { samePage?: boolean }).samePage), true, 'the QR changed without a reload');

      socket.openAs(number.phone.slice(1));
      await page.getByText('Linked: the number is connected.').waitFor({ timeout: POLL_WAIT_MS });
      assert.equal(await page.locator('#link-qr').isVisible(), false);
      assert.match((await page.locator(`[data-number-status="${number.id}"]`).textContent()) ?? '', /connected/);
    });
  });
}
