import { operatorScope } from '../../../src/domain/tenant-scope.ts';
/**
 * Linking a real number from the operator console, through the real HTTP stack and the real
 * Baileys engine, with only WhatsApp's servers replaced by fake sockets (fake-whatsapp.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import QRCode from 'qrcode';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { dialects } from '../../support/databases.ts';
import { startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { createTestUser } from '../../support/users.ts';
import { RecordingSocketFactory, waitFor } from '../../support/fake-whatsapp.ts';
import { DashboardClient } from '../../support/dashboard-client.ts';

const PASSWORD = 'correct horse battery';

for (const dialect of dialects) {
  describe(`linking a number from the operator console (${dialect})`, () => {
    let test: TestGateway;
    let operator: DashboardClient;
    let accountId: string;
    const whatsapp = new RecordingSocketFactory();

    before(async () => {
      test = await startTestGateway(dialect, {}, { baileysSocketFactory: whatsapp.create });
      await createTestUser(test.gateway, {
        email: 'op@linking.test',
        accountId: null,
        password: PASSWORD,
        isOperator: true,
        role: 'admin',
      });
      operator = new DashboardClient(test);
      assert.equal((await operator.signIn('op@linking.test', PASSWORD)).statusCode, 303);
      accountId = (await test.gateway.accounts.createAccount({ name: 'Linking' })).id;
    });
    after(async () => {
      await test.gateway.linking.stopAll();
      await test.gateway.supervisor.stopAll();
      await test.close();
    });

    const addBaileysNumber = () => test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'baileys' });
    const page = (number: WhatsAppNumber) => `/operator/numbers/${number.id}`;
    const linkState = async (number: WhatsAppNumber) => {
      const response = await operator.get(`${page(number)}/link.json`);
      assert.equal(response.statusCode, 200, response.body);
      return response.json() as {
        number_status: string;
        attempt: null | {
          active: boolean;
          status: string;
          reason: string | null;
          qr_version: number;
          pairing_code: string | null;
          message: string;
        };
      };
    };
    // The session's status reaches the database through the group committer, a moment after the
    // link update that the attempt records.
    const settledState = async (number: WhatsAppNumber, status: string) => {
      for (let tries = 0; tries < 200; tries++) {
        const state = await linkState(number);
        if (state.number_status === status) return state;
        await delay(10);
      }
      assert.fail(`${number.phone} never reached ${status}`);
    };
    const startLinking = async (number: WhatsAppNumber, method: 'qr' | 'pairing_code') => {
      const sockets = whatsapp.sockets.length;
      const response = await operator.submit(page(number), `${page(number)}/link`, { method });
      assert.equal(response.statusCode, 303, response.body);
      assert.equal(response.headers.location, `${page(number)}#link-panel`);
      assert.equal(whatsapp.sockets.length, sockets + 1, 'linking opened one socket');
      return whatsapp.latest;
    };

    it('shows each QR as an SVG as WhatsApp rotates it, and the page polls for the new one', async () => {
      const number = await addBaileysNumber();
      const before = await operator.get(page(number));
      assert.match(before.body, /Link with a QR code/);
      assert.match(before.body, /Not linking/);
      assert.doesNotMatch(before.body, /data-link-state=/, 'nothing to poll before an attempt');

      const socket = await startLinking(number, 'qr');
      assert.deepEqual((await linkState(number)).attempt?.qr_version, 0);
      assert.equal((await operator.get(`${page(number)}/link-qr.svg`)).statusCode, 404, 'no QR before WhatsApp offers one');

      socket.emit('connection.update', { qr: 'first-qr-payload' });
      const first = await linkState(number);
      assert.equal(first.attempt?.active, true);
      assert.equal(first.attempt?.qr_version, 1);
      assert.match(first.attempt?.message ?? '', /Scan this QR code/);
      const image = await operator.get(`${page(number)}/link-qr.svg?v=1`);
      assert.equal(image.statusCode, 200);
      assert.match(String(image.headers['content-type']), /^image\/svg\+xml/);
      assert.equal(image.headers['cache-control'], 'no-store');
      assert.equal(
        image.body,
        await QRCode.toString('first-qr-payload', { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }),
        'the SVG encodes the QR WhatsApp offered',
      );

      const shown = await operator.get(page(number));
      assert.match(shown.body, new RegExp(`data-link-state="/operator/numbers/${number.id}/link.json"`));
      assert.match(shown.body, new RegExp(`id="link-qr"[^>]*src="/operator/numbers/${number.id}/link-qr.svg\\?v=1"`));

      socket.emit('connection.update', { qr: 'second-qr-payload' });
      assert.equal((await linkState(number)).attempt?.qr_version, 2);
      const rotated = await operator.get(`${page(number)}/link-qr.svg?v=2`);
      assert.equal(rotated.body, await QRCode.toString('second-qr-payload', { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }));
      assert.notEqual(rotated.body, image.body);
    });

    it('ends as link_expired when the QR codes run out, with no new socket and no QR left to fetch', async () => {
      const number = await addBaileysNumber();
      const socket = await startLinking(number, 'qr');
      socket.emit('connection.update', { qr: 'only-qr' });
      const sockets = whatsapp.sockets.length;
      socket.closeWith(408);
      await waitFor('the attempt ends', () => test.gateway.linking.current(number.id)?.active === false);
      const state = await settledState(number, 'link_expired');
      assert.equal(state.attempt?.status, 'link_expired');
      assert.match(state.attempt?.message ?? '', /Linking ended \(link expired\)/);
      assert.equal((await operator.get(`${page(number)}/link-qr.svg`)).statusCode, 404);
      assert.equal(whatsapp.sockets.length, sockets, 'an expired link does not reconnect');
      assert.ok(socket.endCalls.length > 0, 'the socket is ended');
      const after = await operator.get(page(number));
      assert.doesNotMatch(after.body, /data-link-state=/, 'the page stops polling');
      assert.match(after.body, /Link with a QR code/, 'the operator can start again');
    });

    it('shows the pairing code, asked for once the first QR marks the socket ready, and no QR', async () => {
      const number = await addBaileysNumber();
      const socket = await startLinking(number, 'pairing_code');
      assert.deepEqual(socket.pairingCodeCalls, [], 'not asked before the socket is ready');
      assert.match((await linkState(number)).attempt?.message ?? '', /Waiting for WhatsApp to offer a pairing code/);
      socket.emit('connection.update', { qr: 'ready-qr' });
      await waitFor('the code arrives', () => test.gateway.linking.current(number.id)?.pairingCode !== null);
      assert.deepEqual(socket.pairingCodeCalls, [number.phone.slice(1)]);
      const state = await linkState(number);
      assert.equal(state.attempt?.pairing_code, 'WAGW-2345');
      const shown = await operator.get(page(number));
      assert.match(shown.body, /id="link-pairing-code"[^>]*>WAGW-2345</);
      assert.match(shown.body, /id="link-qr"[^>]*hidden/, 'the QR stays hidden when linking by code');
    });

    it('keeps the session running once the right phone links, and reports connected', async () => {
      const number = await addBaileysNumber();
      const socket = await startLinking(number, 'qr');
      socket.emit('connection.update', { qr: 'scan-me' });
      socket.openAs(number.phone.slice(1));
      await waitFor('the attempt ends', () => test.gateway.linking.current(number.id)?.active === false);
      const state = await settledState(number, 'connected');
      assert.equal(state.attempt?.status, 'connected');
      assert.equal(socket.endCalls.length, 0, 'the linked session is the number’s live session');
      assert.match((await operator.get(page(number))).body, /Linked: the number is connected/);
    });

    it('logs out and reports a phone that is not the number’s own', async () => {
      const number = await addBaileysNumber();
      const socket = await startLinking(number, 'qr');
      socket.emit('connection.update', { qr: 'scan-me' });
      socket.openAs('447700900999');
      await waitFor('the attempt ends', () => test.gateway.linking.current(number.id)?.active === false);
      const state = await linkState(number);
      assert.equal(state.attempt?.status, 'logged_out');
      assert.match(state.attempt?.reason ?? '', /\+447700900999, not \+44/);
      assert.equal(socket.logoutCalls, 1);
    });

    it('cancels an attempt: the socket ends and the page stops polling', async () => {
      const number = await addBaileysNumber();
      const socket = await startLinking(number, 'qr');
      socket.emit('connection.update', { qr: 'never-scanned' });
      const response = await operator.submit(page(number), `${page(number)}/link/cancel`, {});
      assert.equal(response.statusCode, 303);
      assert.equal((await linkState(number)).attempt?.active, false);
      assert.ok(socket.endCalls.length > 0);
    });

    it('refuses an unknown method and a sandbox number with the reason on the page', async () => {
      const number = await addBaileysNumber();
      const wrong = await operator.submit(page(number), `${page(number)}/link`, { method: 'carrier-pigeon' });
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /Choose to link with a QR code or with a pairing code/);
      const sandbox = await test.gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      const sandboxPage = await operator.get(page(sandbox));
      assert.match(sandboxPage.body, /Sandbox numbers are connected at once/);
      const refused = await operator.submit(page(sandbox), `${page(sandbox)}/link`, { method: 'qr' });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /connects without linking/);
    });
  });
}
