/**
 * Takes the screenshots docs/integrations.md shows of the dashboard's Chatwoot inbox form and page
 * (docs/images/), with Debian's Chromium as the browser tests use it: `npm run docs:screenshots`
 * after changing the webhook form. A throwaway gateway on SQLite, an owner, and a Chatwoot inbox
 * made through the form as a person makes one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operatorScope } from '../src/domain/tenant-scope.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { startServer } from '../src/server.ts';
import { browserTestConfig, launchChromium } from '../test/support/browser.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const IMAGES = path.join(ROOT, 'docs/images');
const OWNER = { email: 'owner@example.com', password: 'an owner password 123' };

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-screenshots-'));
// A Chatwoot on the operator's own machine, which the address guard lets through only when allowed.
const config = browserTestConfig(`sqlite:${path.join(directory, 'wagw.db')}`, {
  WAGW_MEDIA_DIR: path.join(directory, 'media'),
  WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:3000',
});
const gateway = await createGateway(config, createLogger(config));
const server = await startServer(gateway);
const browser = await launchChromium();
try {
  const account = await gateway.accounts.createAccount({ name: 'Acme Support', plan: 'pro' });
  await gateway.accounts.createUser({ email: OWNER.email, accountId: account.id, role: 'owner', password: OWNER.password });
  const number = await gateway.numbers.addNumber(operatorScope(), { accountId: account.id, phone: '+447700900123' });
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  await page.goto(`${server.address}/login`);
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));

  await page.goto(`${server.address}/webhooks/new`);
  await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:3000');
  await page.getByLabel('Chatwoot account id').fill('1');
  await page.getByLabel('Inbox id').fill('4');
  await page.getByLabel('Number (optional)').fill(number.phone);
  await page.getByLabel('API access token').fill('cw-example-token');
  await page.getByLabel('API access token').blur();
  fs.mkdirSync(IMAGES, { recursive: true });
  await page.locator('fieldset', { hasText: 'Chatwoot inbox' }).screenshot({ path: path.join(IMAGES, 'dashboard-chatwoot-form.png') });
  await page.getByRole('button', { name: 'Create webhook' }).click();
  await page.waitForURL((url) => /^\/webhooks\/wh_/.test(url.pathname));
  await page.locator('section.card', { hasText: 'Callback URL' }).screenshot({ path: path.join(IMAGES, 'dashboard-chatwoot-inbox.png') });
  console.log('wrote docs/images/dashboard-chatwoot-form.png and docs/images/dashboard-chatwoot-inbox.png');
} finally {
  await browser.close();
  await server.stop();
  fs.rmSync(directory, { recursive: true, force: true });
}
