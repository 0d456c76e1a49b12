/**
 * Takes the screenshots docs/integrations.md shows of the dashboard's forms (docs/images/), with
 * Debian's Chromium as the browser tests use it: `npm run docs:screenshots` after changing the
 * webhook or key forms. A throwaway gateway on SQLite and an owner who signs in; for Chatwoot, an
 * inbox made through the webhook form as a person makes one; for n8n, the key its credentials
 * take, made through the key form, and the webhook its trigger registers with that key.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { operatorScope } from '../src/domain/tenant-scope.ts';
import { createGateway, createLogger } from '../src/main.ts';
import { startServer } from '../src/server.ts';
import { browserTestConfig, launchChromium } from '../test/support/browser.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const IMAGES = path.join(ROOT, 'docs/images');
const OWNER = { email: 'owner@example.com', password: 'an owner password 123' };
/** Where the example Chatwoot and n8n listen: the operator's own machine, which the address guard lets through only when allowed. */
const CHATWOOT_URL = 'http://127.0.0.1:3000';
const N8N_URL = 'http://127.0.0.1:5678';

async function chatwootScreenshots(page: Page, address: string, phone: string): Promise<string[]> {
  await page.goto(`${address}/webhooks/new`);
  await page.getByLabel('Endpoint URL').fill(CHATWOOT_URL);
  await page.getByLabel('Chatwoot account id').fill('1');
  await page.getByLabel('Inbox id').fill('4');
  await page.getByLabel('Number (optional)').fill(phone);
  await page.getByLabel('API access token').fill('cw-example-token');
  await page.getByLabel('API access token').blur();
  await page.locator('fieldset', { hasText: 'Chatwoot inbox' }).screenshot({ path: path.join(IMAGES, 'dashboard-chatwoot-form.png') });
  await page.getByRole('button', { name: 'Create webhook' }).click();
  await page.waitForURL((url) => /^\/webhooks\/wh_/.test(url.pathname));
  await page.locator('section.card', { hasText: 'Callback URL' }).screenshot({ path: path.join(IMAGES, 'dashboard-chatwoot-inbox.png') });
  return ['dashboard-chatwoot-form.png', 'dashboard-chatwoot-inbox.png'];
}

async function n8nScreenshots(page: Page, address: string): Promise<string[]> {
  await page.goto(`${address}/keys`);
  await page.getByLabel('Key name').fill('n8n');
  // read and send are ticked already; the trigger registers its webhook with the webhooks scope.
  await page.locator('#key-scope-webhooks').check();
  const form = page.locator('section.card', { hasText: 'Create a key' });
  await form.screenshot({ path: path.join(IMAGES, 'dashboard-n8n-key-form.png') });
  await form.getByRole('button', { name: 'Create key' }).click();
  const apiKey = await page.locator('#new-api-key').inputValue();

  // What the trigger sends on activation (WaGatewayTrigger.node.ts, create), to its production URL.
  const registered = await fetch(`${address}/api/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `${N8N_URL}/webhook/${randomUUID()}/webhook`,
      events: ['message'],
      message_scope: 'direct',
      description: 'n8n: Reply on WhatsApp / wa-gateway Trigger',
    }),
  });
  if (registered.status !== 201) throw new Error(`the trigger's registration answered ${registered.status}: ${await registered.text()}`);
  const { id } = (await registered.json()) as { id: string };
  await page.goto(`${address}/webhooks/${id}`);
  await page.locator('section.card', { hasText: 'Details' }).screenshot({ path: path.join(IMAGES, 'dashboard-n8n-webhook.png') });
  return ['dashboard-n8n-key-form.png', 'dashboard-n8n-webhook.png'];
}

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-screenshots-'));
const config = browserTestConfig(`sqlite:${path.join(directory, 'wagw.db')}`, {
  WAGW_MEDIA_DIR: path.join(directory, 'media'),
  WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: [CHATWOOT_URL, N8N_URL].map((url) => new URL(url).host).join(','),
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
  fs.mkdirSync(IMAGES, { recursive: true });
  const written = [...(await chatwootScreenshots(page, server.address, number.phone)), ...(await n8nScreenshots(page, server.address))];
  console.log(`wrote ${written.map((name) => `docs/images/${name}`).join(', ')}`);
} finally {
  await browser.close();
  await server.stop();
  fs.rmSync(directory, { recursive: true, force: true });
}
