import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/config.ts';
import type { WhatsAppNumber } from '../../src/domain/model.ts';
import { operatorScope } from '../../src/domain/tenant-scope.ts';
import { createGateway, createLogger, type Gateway, type GatewayBoundaries } from '../../src/main.ts';
import { startServer } from '../../src/server.ts';
import { createTestDatabase, type Dialect } from './databases.ts';
import { uniquePhone } from './gateway.ts';

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

/**
 * Everything a context's pages tell the browser's console that a person should never see: errors
 * and warnings, uncaught exceptions, and every Content-Security-Policy violation, reported by the
 * document's own `securitypolicyviolation` event rather than trusted to the console's wording.
 * The listener is installed through the DevTools protocol, which the page's CSP does not govern.
 */
export async function watchConsole(context: BrowserContext): Promise<string[]> {
  const reported: string[] = [];
  await context.exposeBinding('reportPolicyViolation', (source, violation: string) => {
    reported.push(`CSP violation on ${source.page?.url() ?? 'a page'}: ${violation}`);
  });
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (event) => {
    window.reportPolicyViolation(event.effectiveDirective + ' refused ' + (event.blockedURI || 'an inline ' + event.violatedDirective) + ' at ' + event.sourceFile + ':' + event.lineNumber);
  });`);
  context.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      reported.push(`${message.type()} on ${message.page()?.url() ?? 'a page'}: ${message.text()}`);
  });
  context.on('weberror', (error) => reported.push(`uncaught on ${error.page()?.url() ?? 'a page'}: ${error.error().message}`));
  return reported;
}

/** The smallest a chart's axis label may be drawn on screen, scaled with its SVG: "readable at normal size". */
const CHART_TEXT_MIN_PX = 11;

/**
 * Where the page shown breaks the layout at its width (issue 47): the document scrolls
 * sideways; a table's box, a card, a chart or a thread is wider than its box; or a table cell
 * is cut, by the box that clips it (a scrolling box counts: its last column is off-screen), by
 * the screen, or by its own content overflowing it. Cells hidden on purpose (a closed details,
 * a visually hidden heading row) are not drawn, and are skipped. And a chart's text drawn smaller
 * than CHART_TEXT_MIN_PX once its SVG is scaled to its box.
 */
export async function layoutFaults(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const faults = [];
    const screen = document.documentElement.clientWidth;
    const name = (element) => element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') +
      (typeof element.className === 'string' && element.className.trim() ? '.' + element.className.trim().split(/\\s+/).join('.') : '');
    if (document.documentElement.scrollWidth > screen) faults.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + screen);
    for (const box of document.querySelectorAll('.table-wrap, .conversation, .chat-list, .card, figure'))
      if (box.scrollWidth > box.clientWidth + 1) faults.push(name(box) + ' is wider than its box: ' + box.scrollWidth + ' > ' + box.clientWidth);
    for (const cell of document.querySelectorAll('td, th')) {
      const drawn = cell.getBoundingClientRect();
      if (drawn.width === 0 || drawn.height === 0) continue;
      const cellName = name(cell) + ' "' + cell.textContent.trim().slice(0, 40) + '"';
      let hidden = false;
      let clip = null;
      for (let box = cell.parentElement; box !== null && box !== document.documentElement; box = box.parentElement) {
        const style = getComputedStyle(box);
        if (style.clipPath !== 'none') { hidden = true; break; }
        if (clip === null && style.overflowX !== 'visible') clip = box;
      }
      if (hidden) continue;
      const limit = clip === null ? { left: 0, right: screen } : clip.getBoundingClientRect();
      if (drawn.left < limit.left - 1 || drawn.right > limit.right + 1)
        faults.push(cellName + ' is cut by ' + (clip === null ? 'the screen' : name(clip)) + ': ' + Math.round(drawn.left) + '..' + Math.round(drawn.right) + ' outside ' + Math.round(limit.left) + '..' + Math.round(limit.right));
      if (cell.scrollWidth > cell.clientWidth + 1) faults.push(cellName + ' overflows its cell: ' + cell.scrollWidth + ' > ' + cell.clientWidth);
    }
    for (const text of document.querySelectorAll('svg.chart text')) {
      const chart = text.ownerSVGElement;
      const scale = chart.getBoundingClientRect().width / chart.viewBox.baseVal.width;
      const drawnPx = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (drawnPx < ${CHART_TEXT_MIN_PX}) faults.push('chart text "' + text.textContent + '" is drawn at ' + drawnPx.toFixed(1) + ' px');
    }
    return faults;
  })()`)) as string[];
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

/** A gateway of its own database with one number, served on a free port, with a Chromium page beside it. */
export interface ServedInChromium {
  gateway: Gateway;
  number: WhatsAppNumber;
  baseUrl: string;
  page: Page;
  /** Closes the browser and the server, and drops the test's database. */
  close(): Promise<void>;
}

/**
 * The console's browser tests' start: a fresh database and gateway (`env` on top of
 * browserTestConfig's), an operator who signs in with `operator`, one number of `engine` in an
 * account, the gateway served, and Chromium at 1280 by 900.
 */
export async function operatorNumberInChromium(
  dialect: Dialect,
  operator: { email: string; password: string },
  options: { engine: WhatsAppNumber['engine']; env?: Record<string, string>; boundaries?: GatewayBoundaries },
): Promise<ServedInChromium> {
  const database = await createTestDatabase(dialect);
  try {
    const config = browserTestConfig(database.url, options.env);
    const gateway = await createGateway(config, createLogger(config), options.boundaries);
    await gateway.accounts.ensureOperator(operator.email, operator.password);
    const account = await gateway.accounts.createAccount({ name: `An account in a browser` });
    const number = await gateway.numbers.addNumber(operatorScope(), {
      accountId: account.id,
      phone: uniquePhone(),
      engine: options.engine,
    });
    const server = await startServer(gateway);
    const baseUrl = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
    const browser = await launchChromium().catch(async (error: unknown) => {
      await server.stop();
      throw error;
    });
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const close = async () => {
      await browser.close();
      server.app.server.closeAllConnections();
      await server.stop();
      await database.drop();
    };
    return { gateway, number, baseUrl, page, close };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Signs in through the login form, as a person does, and waits to leave it. */
export async function signInWithForm(page: Page, baseUrl: string, user: { email: string; password: string }): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));
}
