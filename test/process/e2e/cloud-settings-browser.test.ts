/**
 * A Cloud API number's settings form in Chromium (docs/dashboard.md, Cloud API numbers): its
 * labels lead to its fields, the browser itself holds back an id that is not digits, a good form
 * saves through the console's CSRF with the secrets shown only as set, and Clear asks first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import type { Gateway } from '../../../src/main.ts';
import { operatorNumberInChromium, saveScreenshot, signInWithForm, type ServedInChromium } from '../../support/browser.ts';
import { dialects } from '../../support/databases.ts';

const OPERATOR = { email: 'operator@cloud-browser.test', password: 'operator password 1' };
const PUBLIC_URL = 'https://wa.example.test';
const TOKEN = 'EAAG-browser-token-0123';

for (const dialect of dialects) {
  describe(`a Cloud API number's settings in Chromium (${dialect})`, () => {
    let served: ServedInChromium;
    let gateway: Gateway;
    let page: Page;
    let baseUrl: string;
    let number: WhatsAppNumber;

    before(async () => {
      served = await operatorNumberInChromium(dialect, OPERATOR, { engine: 'cloud', env: { WAGW_PUBLIC_URL: PUBLIC_URL } });
      ({ gateway, number, baseUrl, page } = served);
    });
    after(() => served?.close());

    const stored = () => gateway.store.db.selectFrom('cloud_numbers').selectAll().where('number_id', '=', number.id).executeTakeFirst();

    it('holds back a bad id, saves a good form with the secrets shown only as set, and clears after asking', async () => {
      await signInWithForm(page, baseUrl, OPERATOR);

      const numberPage = `${baseUrl}/operator/numbers/${number.id}`;
      await page.goto(numberPage);
      assert.equal(await page.locator('#cloud-callback').textContent(), `${PUBLIC_URL}/cloud/callbacks/${number.id}`);
      const fill = async (phoneNumberId: string) => {
        await page.getByLabel('Phone number id').fill(phoneNumberId);
        await page.getByLabel('WhatsApp Business Account id').fill('102290129340398');
        await page.getByLabel('Access token').fill(TOKEN);
        await page.getByLabel('App secret').fill('browser-app-secret-4567');
        await page.getByLabel('Verify token').fill('browser-verify-8901');
        await page.getByRole('button', { name: 'Save settings' }).click();
      };

      await fill('12ab');
      // The browser refuses it before anything is sent: the page stays, the field is invalid.
      assert.equal(await page.locator('#cloud-phone-number-id:invalid').count(), 1);
      assert.equal(page.url(), numberPage);
      assert.equal(await stored(), undefined);

      await fill('106540352242922');
      await page.waitForURL(/#cloud$/);
      await page.getByText('The Cloud API settings are saved').waitFor();
      const facts = page.locator('#cloud dl');
      assert.match((await facts.textContent()) ?? '', /Phone number id106540352242922/);
      assert.match((await facts.textContent()) ?? '', /Access tokenset \(sealed, never shown\)/);
      assert.equal(await page.getByLabel('Access token').inputValue(), '', 'the secret fields are never filled in');
      assert.ok(!(await page.content()).includes(TOKEN));
      assert.equal((await stored())?.phone_number_id, '106540352242922');
      await saveScreenshot(page, `${dialect}-cloud-settings-1280`);

      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Clear settings' }).click();
      await page.getByText('The Cloud API settings are cleared').waitFor();
      assert.equal(await stored(), undefined);
    });
  });
}
