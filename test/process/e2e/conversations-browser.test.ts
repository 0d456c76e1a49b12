/**
 * Chats in Chromium (issue 47): the chat list, a thread with everything a chat can hold, a reply
 * through the public send path that shows queued and turns sent, and a new message appearing,
 * all without a reload; a member reads but cannot send. Every page of the dashboard and of the
 * operator console is checked at a phone's and a laptop's width for sideways scroll and cut
 * table cells, with screenshots kept in test-artifacts/screenshots, and the browser's console
 * must stay free of errors, warnings and CSP violations.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { startServer, type RunningServer } from '../../../src/server.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { samples } from '../../support/media-samples.ts';
import { browserTestConfig, launchChromium, layoutFaults, saveScreenshot, watchConsole } from '../../support/browser.ts';
import { CONDITION_WAIT_MS, waitUntil } from '../../support/waiting.ts';

const OWNER = { email: 'owner@chats-browser.test', password: 'owner password 123' };
const MEMBER = { email: 'member@chats-browser.test', password: 'member password 123' };
const OPERATOR = { email: 'operator@chats-browser.test', password: 'operator password 123' };
const CUSTOMER = '+14155550181';
const OTHER_CUSTOMER = '+14155550182';
/** The gap the number's policy puts between two sends: long enough that a reply right after a send waits. */
const GAP_MS = 6_000;

for (const dialect of dialects) {
  describe(`chats in Chromium (${dialect})`, () => {
    let database: TestDatabase;
    let gateway: Gateway;
    let server: RunningServer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let baseUrl: string;
    let number: WhatsAppNumber;
    let apiKey = '';
    let accountId = '';
    let webhookId = '';
    let ownerId = '';
    /** Whatever the owner's and the operator's pages told the console: errors, warnings, CSP violations. */
    let consoleReports: string[] = [];

    async function api(path: string, body: object): Promise<Record<string, unknown>> {
      const response = await fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await response.json()) as Record<string, unknown>;
      assert.ok(response.status < 300, `${path} answered ${response.status}: ${JSON.stringify(json)}`);
      return json;
    }

    before(async () => {
      database = await createTestDatabase(dialect);
      // The webhook below posts to a closed local port, so that the delivery log has failures to show.
      const config = browserTestConfig(database.url, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' });
      gateway = await createGateway(config, createLogger(config));
      const account = await gateway.accounts.createAccount({ name: 'Chats Co', plan: 'pro' });
      accountId = account.id;
      ownerId = (await gateway.accounts.createUser({ email: OWNER.email, accountId, role: 'owner', password: OWNER.password })).user.id;
      await gateway.accounts.ensureOperator(OPERATOR.email, OPERATOR.password);
      await gateway.accounts.createUser({ email: MEMBER.email, accountId, role: 'member', password: MEMBER.password });
      number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      apiKey = (await gateway.apiKeys.createKey({ accountId, name: 'seed', scopes: ['read', 'send', 'webhooks'] })).plaintext;
      server = await startServer(gateway);
      baseUrl = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      browser = await launchChromium();
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      consoleReports = await watchConsole(context);
      page = await context.newPage();
    });

    after(async () => {
      await browser?.close();
      server?.app.server.closeAllConnections();
      await server?.stop();
      await database?.drop();
    });

    async function signIn(on: Page, user: { email: string; password: string }): Promise<void> {
      await on.goto(`${baseUrl}/login`);
      await on.getByLabel('Email').fill(user.email);
      await on.getByLabel('Password').fill(user.password);
      await on.getByRole('button', { name: 'Sign in' }).click();
      await on.waitForURL((url) => !url.pathname.startsWith('/login'));
    }

    it('seeds a chat with what a chat can hold, through the public API', async () => {
      const webhook = await api('/webhooks', { url: 'http://127.0.0.1:9/chats', events: ['message'] });
      webhookId = String(webhook.id);
      const hello = await api('/sandbox/receive', { from_phone: CUSTOMER, to_phone: number.phone, message: 'Hello, is my order ready?' });
      const answer = await api('/send_message', { from_phone: number.phone, to_phone: CUSTOMER, message: 'Yes, shipping tomorrow' });
      await api(`/messages/${String(answer.message_id)}/edit`, { message: 'Yes, it ships today' });
      await api('/send_reaction', { from_phone: number.phone, message_id: hello.message_id, emoji: '👍' });
      await api('/sandbox/receive', {
        from_phone: CUSTOMER,
        to_phone: number.phone,
        location: { latitude: 51.5072, longitude: -0.1276, name: 'Warehouse gate' },
      });
      await api('/sandbox/receive', {
        from_phone: CUSTOMER,
        to_phone: number.phone,
        contacts: [{ name: 'Ana Courier', phones: ['+447700900555'] }],
      });
      const poll = await api('/send_message', {
        from_phone: number.phone,
        to_phone: CUSTOMER,
        poll: { question: 'Which delivery slot?', options: ['Morning', 'Evening'] },
      });
      await api('/sandbox/poll_vote', { from_phone: CUSTOMER, to_phone: number.phone, message_id: poll.message_id, options: ['Evening'] });
      await api('/sandbox/receive', {
        from_phone: CUSTOMER,
        to_phone: number.phone,
        message: 'Evening is best',
        reply_to: answer.message_id,
      });
      await api('/sandbox/receive', {
        from_phone: CUSTOMER,
        to_phone: number.phone,
        message: 'The parcel label',
        media: { data: samples.png.toString('base64'), mime_type: 'image/png', filename: 'label.png' },
      });
      const wrong = await api('/send_message', { from_phone: number.phone, to_phone: CUSTOMER, message: 'Sent to the wrong chat' });
      await api(`/messages/${String(wrong.message_id)}/revoke`, {});
      await api('/sandbox/receive', { from_phone: OTHER_CUSTOMER, to_phone: number.phone, message: 'A question from someone else' });
    });

    it('lists the chats latest first with unread counts, and finds one by a piece of its phone', async () => {
      await signIn(page, OWNER);
      await page.getByRole('link', { name: 'Chats' }).click();
      await page.waitForURL(/\/conversations$/);
      const titles = await page.locator('.chat-title').allInnerTexts();
      assert.deepEqual(titles, [OTHER_CUSTOMER, CUSTOMER], 'the latest activity comes first');
      assert.equal((await page.locator('.unread-count').first().innerText()).trim(), '1', 'the other customer wrote once');
      assert.ok(Number(await page.locator('.unread-count').nth(1).innerText()) >= 5, 'the customer’s received messages are unread');
      await page.getByLabel('Phone or name').fill(CUSTOMER.slice(-5));
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/\?q=/);
      assert.deepEqual(await page.locator('.chat-title').allInnerTexts(), [CUSTOMER]);
    });

    it('reads the thread: thumbnail, reply, reaction, edit, deletion, poll result, location and contact card', async () => {
      await page.locator('.chat-item', { hasText: CUSTOMER }).click();
      await page.waitForURL(/\/conversations\/num_/);
      const thread = page.locator('.thread');
      const text = await thread.innerText();
      for (const expected of [
        'Hello, is my order ready?',
        'Yes, it ships today',
        'edited',
        '👍',
        'Warehouse gate',
        'Ana Courier',
        'Which delivery slot?',
        '1 voter',
        'This message was deleted',
        'The parcel label',
      ])
        assert.ok(text.includes(expected), `the thread shows "${expected}"`);
      assert.ok(!text.includes('Sent to the wrong chat'), 'a deleted message’s text is not shown');
      assert.ok(!text.includes('A question from someone else'), 'another chat’s message is not in this thread');
      const quote = thread.locator('.bubble', { hasText: 'Evening is best' }).locator('.bubble-quote');
      assert.equal((await quote.innerText()).trim(), 'Yes, it ships today', 'the reply quotes the message it answers');
      const image = thread.locator('img.bubble-image');
      await image.waitFor();
      await page.waitForFunction(
        (element) => (element as unknown as { complete: boolean; naturalWidth: number }).naturalWidth > 0,
        await image.elementHandle(),
        { timeout: CONDITION_WAIT_MS },
      );
    });

    it('replies: the governor’s queued bubble turns sent, and a new message appears, without a reload', async () => {
      await gateway.sendQueues.setNumberPolicy(
        number,
        {
          custom: {
            minGapMs: GAP_MS,
            maxGapMs: GAP_MS,
            perMinute: null,
            perHour: null,
            perDay: null,
            perRecipientGapMs: GAP_MS,
            firstContactsPerDay: null,
            warmUp: null,
            quietHours: null,
            typingBeforeSend: false,
          },
        },
        { kind: 'system', id: 'test', label: 'test', address: null },
      );
      await page.reload();
      await page.getByLabel('Reply').fill('It is on the van now');
      // A send just before, so that the reply must wait its gap in the number's queue.
      await api('/send_message', { from_phone: number.phone, to_phone: OTHER_CUSTOMER, message: 'Thanks, we will answer soon' });
      await page.getByRole('button', { name: 'Send' }).click();
      const reply = page.locator('.bubble.outbound', { hasText: 'It is on the van now' });
      await reply.and(page.locator('[data-status="queued"]')).waitFor({ timeout: CONDITION_WAIT_MS });
      await saveScreenshot(page, `${dialect}-conversation-queued-1280`);
      // A marker on the window lives only as long as the page is not reloaded.
      await page.evaluate('window.samePage = true');
      // Sent, or further along already (the sandbox's phone receives it at once).
      await reply
        .and(page.locator(':is([data-status="sent"], [data-status="delivered"], [data-status="read"])'))
        .waitFor({ timeout: CONDITION_WAIT_MS });

      await gateway.sandboxInbox.receiveOnNumber(accountScope(accountId), number.id, CUSTOMER, 'Got it, thank you!');
      await page.locator('.bubble.inbound', { hasText: 'Got it, thank you!' }).waitFor({ timeout: CONDITION_WAIT_MS });
      assert.equal(await page.evaluate('window.samePage'), true, 'the page was never reloaded');
      await saveScreenshot(page, `${dialect}-conversation-1280`);
    });

    it('lets a member read a chat but not send', async () => {
      // Its console is not watched: the refused post below is logged there, as it should be.
      const memberPage = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await signIn(memberPage, MEMBER);
      await memberPage.goto(`${baseUrl}/conversations`);
      await memberPage.locator('.chat-item', { hasText: CUSTOMER }).click();
      await memberPage.locator('.bubble', { hasText: 'Got it, thank you!' }).waitFor();
      assert.equal(await memberPage.getByLabel('Reply').count(), 0, 'no reply box for a member');
      // The form's route refuses a member too, with a valid token of the member's own session.
      const status = await memberPage.evaluate(`(async () => {
        const token = document.querySelector('input[name="_csrf"]').value;
        const body = new URLSearchParams({ _csrf: token, message: 'from a member', reply_key: 'dashboard:' + crypto.randomUUID() });
        const response = await fetch(location.pathname + '/reply', { method: 'POST', body, headers: { accept: 'text/html' } });
        return response.status;
      })()`);
      assert.equal(status, 403);
      await memberPage.context().close();
    });

    /**
     * Shows each path at a phone's and a laptop's width in `on`, keeps its screenshot, and returns
     * where its layout breaks (layoutFaults), each named by its path and width.
     */
    async function walk(on: Page, paths: Record<string, string>): Promise<string[]> {
      const faults: string[] = [];
      for (const width of [390, 1280]) {
        await on.setViewportSize({ width, height: 844 });
        for (const [name, path] of Object.entries(paths)) {
          const response = await on.goto(`${baseUrl}${path}`);
          assert.equal(response?.status(), 200, `${path} answered ${response?.status()}`);
          // Nothing blocked is only worth asserting under the strict policy: no inline script or style, anywhere.
          const policy = (await response!.allHeaders())['content-security-policy'] ?? '';
          assert.match(policy, /script-src 'self'(;|$)/, `${path}: ${policy}`);
          assert.match(policy, /style-src 'self'(;|$)/, `${path}: ${policy}`);
          assert.doesNotMatch(policy, /unsafe-|\*/, `${path}: ${policy}`);
          await saveScreenshot(on, `${dialect}-${name}-${width}`);
          faults.push(...(await layoutFaults(on)).map((fault) => `${path} at ${width} px: ${fault}`));
        }
      }
      return faults;
    }

    it('fits a phone and a laptop screen on every page of the account, with nothing in the console', async () => {
      const conversation = new URL(page.url()).pathname;
      // A message waiting in the number's queue, so that the Numbers page shows its queue table too.
      const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
      await api('/send_message', { from_phone: number.phone, to_phone: OTHER_CUSTOMER, message: 'Later', send_at: inAnHour });
      // The webhook's failed attempts, with their errors, in its delivery log and the Activity charts.
      await waitUntil(
        async () =>
          (await gateway.webhooks.listDeliveries(accountScope(accountId), webhookId, 50)).some((entry) => entry.attempts.length > 0),
        'a webhook attempt',
        50,
      );
      const faults = await walk(page, {
        overview: '/',
        conversations: '/conversations',
        conversation,
        messages: '/messages',
        activity: '/activity',
        numbers: '/numbers',
        keys: '/keys',
        webhooks: '/webhooks',
        'webhook-new': '/webhooks/new',
        webhook: `/webhooks/${webhookId}`,
        'webhook-edit': `/webhooks/${webhookId}/edit`,
        team: '/team',
        password: '/account/password',
      });
      assert.deepEqual(faults, [], 'no page scrolls sideways or cuts a column');
      assert.deepEqual(consoleReports, [], 'the browser console reported nothing');
    });

    it('fits them on every page of the sign-in, the invitation and the operator console, with nothing in the console', async () => {
      await gateway.numbers.setProxy(operatorScope(), number.id, 'http://proxy-user:proxy-secret@127.0.0.1:3128');
      const { token } = await gateway.team.createInvite(accountId, 'member', ownerId);
      const signedOut = await browser.newContext();
      const signedOutReports = await watchConsole(signedOut);
      const visitor = await signedOut.newPage();
      const faults = await walk(visitor, { login: '/login', invite: `/invite/${token}` });

      const operatorContext = await browser.newContext();
      const operatorReports = await watchConsole(operatorContext);
      const operator = await operatorContext.newPage();
      await signIn(operator, OPERATOR);
      faults.push(
        ...(await walk(operator, {
          'operator-accounts': '/operator/accounts',
          'operator-account': `/operator/accounts/${accountId}`,
          'operator-users': '/operator/users',
          'operator-numbers': '/operator/numbers',
          'operator-number': `/operator/numbers/${number.id}`,
          'operator-tokens': '/operator/tokens',
          'operator-audit': '/operator/audit',
          'operator-system': '/operator/system',
          'operator-cluster': '/operator/cluster',
        })),
      );
      await signedOut.close();
      await operatorContext.close();
      assert.deepEqual(faults, [], 'no page scrolls sideways or cuts a column');
      assert.deepEqual([...signedOutReports, ...operatorReports], [], 'the browser console reported nothing');
    });
  });
}
