import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadConfig, type Config } from '../../src/config.ts';

/** Debian's Chromium, which .ci/run and scripts/test.sh install; Playwright's own download is not used. */
const CHROMIUM_PATH = process.env.WAGW_CHROMIUM_PATH ?? '/usr/bin/chromium';

const SCREENSHOT_DIRECTORY = path.resolve('test-artifacts', 'screenshots');

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`The browser tests need Chromium at ${CHROMIUM_PATH}: apt-get install chromium, or set WAGW_CHROMIUM_PATH.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** A full-page screenshot kept as a test artifact, for people reviewing the dashboard's look. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIRECTORY, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIRECTORY, `${name}.png`), fullPage: true });
}

/** The config of a gateway that a browser test starts: its own database, any free port, quiet. */
export function browserTestConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    WAGW_SECRET_KEY: process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16),
    ...env,
  });
}
