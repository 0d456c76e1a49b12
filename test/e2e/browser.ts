import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, which .ci/run and scripts/test.sh install; Playwright's own download is not used. */
export const CHROMIUM_PATH = process.env.WAGW_CHROMIUM_PATH ?? '/usr/bin/chromium';

export const SCREENSHOT_DIRECTORY = path.resolve('test-artifacts', 'screenshots');

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
