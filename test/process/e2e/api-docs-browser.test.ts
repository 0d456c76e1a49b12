/**
 * The API reference at /docs in Chromium, under the same Content-Security-Policy as the
 * dashboard: a policy can break a page silently, so the page is checked for what a reader sees.
 * It reads no tenant data, so one database is enough.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { createGateway, createLogger } from '../../../src/main.ts';
import { createTestDatabase, type TestDatabase } from '../../support/databases.ts';
import { browserTestConfig, launchChromium, saveScreenshot } from '../../support/browser.ts';
import { CONDITION_WAIT_MS } from '../../support/waiting.ts';

describe('the API reference in Chromium', () => {
  let database: TestDatabase;
  let server: RunningServer;
  let browser: Browser;
  let baseUrl: string;

  before(async () => {
    database = await createTestDatabase('sqlite');
    const config = browserTestConfig(database.url);
    server = await startServer(await createGateway(config, createLogger(config)));
    baseUrl = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await database?.drop();
  });

  it('renders the send operation under a strict CSP, with nothing blocked', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/.test(message.text())) violations.push(message.text());
    });
    const response = await page.goto(`${baseUrl}/docs`);
    const policy = String(response?.headers()['content-security-policy']);
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
    await page.getByText('/send_message', { exact: true }).first().waitFor({ timeout: CONDITION_WAIT_MS });
    await saveScreenshot(page, 'api-docs');
    assert.deepEqual(violations, [], 'the page ran without a CSP violation');
  });
});
