/**
 * The live QR in Chromium: the operator starts linking, and each QR WhatsApp offers replaces the
 * one on screen without a reload. WhatsApp's servers are fake sockets; the rest is real.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { RecordingSocketFactory } from '../../support/fake-whatsapp.ts';
import { dialects } from '../../support/databases.ts';
import { operatorNumberInChromium, saveScreenshot, signInWithForm, type ServedInChromium } from '../../support/browser.ts';
import { CONDITION_WAIT_MS } from '../../support/waiting.ts';

const OPERATOR = { email: 'operator@linking-browser.test', password: 'operator password 1' };
/** The page polls every two seconds; a busy machine gets a condition's whole wait. */
const POLL_WAIT_MS = CONDITION_WAIT_MS;

for (const dialect of dialects) {
  describe(`linking a number in Chromium (${dialect})`, () => {
    let served: ServedInChromium;
    let page: Page;
    let baseUrl: string;
    let number: WhatsAppNumber;
    const whatsapp = new RecordingSocketFactory();

    before(async () => {
      served = await operatorNumberInChromium(dialect, OPERATOR, {
        engine: 'baileys',
        boundaries: { baileysSocketFactory: whatsapp.create },
      });
      ({ number, baseUrl, page } = served);
    });
    after(() => served?.close());

    it('swaps in each new QR without a reload, and shows the outcome once the phone links', async () => {
      await signInWithForm(page, baseUrl, OPERATOR);

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
