/**
 * The blocklist, presence and profiles over the real Baileys engine: WhatsApp's side is a fake
 * socket that keeps a blocklist as WhatsApp does (phone JIDs and LIDs), emits presence.update in
 * Baileys' own shape, and answers profile queries; the rest is the gateway's real code.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { DEFAULT_RECONNECT_POLICY } from '../../../src/engines/baileys/reconnect-policy.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { waitFor } from '../../support/fake-whatsapp.ts';
import { waitForValue } from '../../support/waiting.ts';
import { samples } from '../../support/media-samples.ts';
import type { JsonObject } from '../../support/json.ts';

const CONTACT = '+14155550188';
const CONTACT_JID = '14155550188@s.whatsapp.net';
const LID_CONTACT = '301234567890123@lid';
const LID_CONTACT_PHONE_JID = '447700900555@s.whatsapp.net';

for (const dialect of dialects) {
  describe(`contacts through a linked Baileys number (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;
    const as = () => ({ authorization: `Bearer ${linked.apiKey}` });

    before(async () => {
      linked = await startLinkedBaileysNumber(
        dialect,
        { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' },
        // The closed socket's reconnect comes after a backoff; its length is not what is tested here.
        { baileysTimings: { reconnect: { ...DEFAULT_RECONNECT_POLICY, baseDelayMs: 50 } } },
      );
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: receiver.url('/contacts'),
        eventTypes: ['presence.update'],
      });
      linked.test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    it("block and unblock go to WhatsApp as updateBlockStatus on the phone JID; the list is WhatsApp's, a LID resolved where Baileys knows its phone", async () => {
      const blocked = await linked.test.post('/blocklist', { from_phone: linked.number.phone, phone: CONTACT }, linked.apiKey);
      assert.equal(blocked.statusCode, 200, blocked.body);
      assert.deepEqual(linked.socket.blocked, [CONTACT_JID]);
      // Blocked from the phone itself, by LID: WhatsApp lists it so.
      linked.socket.blocked.push(LID_CONTACT, '999999999999999@lid');
      linked.socket.lidMapping.set(LID_CONTACT, LID_CONTACT_PHONE_JID);
      const listed = await linked.test.inject({
        method: 'GET',
        url: `/blocklist?from_phone=${encodeURIComponent(linked.number.phone)}`,
        headers: as(),
      });
      assert.deepEqual(listed.json().contacts, [
        { phone: CONTACT, lid: null },
        { phone: '+447700900555', lid: LID_CONTACT },
        { phone: null, lid: '999999999999999@lid' },
      ]);
      const lifted = await linked.test.inject({
        method: 'DELETE',
        url: `/blocklist/${encodeURIComponent(CONTACT)}?from_phone=${encodeURIComponent(linked.number.phone)}`,
        headers: as(),
      });
      assert.equal(lifted.statusCode, 200, lifted.body);
      assert.deepEqual(linked.socket.blocked, [LID_CONTACT, '999999999999999@lid']);
    });

    it("a subscription is presenceSubscribe on the phone JID; presence.update in Baileys' shape becomes events, LIDs resolved, last seen from Unix seconds", async () => {
      const subscribed = await linked.test.post(
        '/presence/subscribe',
        { from_phone: linked.number.phone, to_phone: CONTACT },
        linked.apiKey,
      );
      assert.equal(subscribed.statusCode, 200, subscribed.body);
      assert.deepEqual(linked.socket.presenceSubscriptions, [CONTACT_JID]);
      linked.socket.lidMapping.set(LID_CONTACT, LID_CONTACT_PHONE_JID);
      linked.socket.emit('presence.update', {
        id: CONTACT_JID,
        presences: { [CONTACT_JID]: { lastKnownPresence: 'unavailable', lastSeen: 1_764_000_000 } },
      });
      linked.socket.emit('presence.update', {
        id: '120363333333333333@g.us',
        presences: { [LID_CONTACT]: { lastKnownPresence: 'composing' } },
      });
      const events = (await receiver.waitForRequests(2)).map((request) => JSON.parse(request.body) as JsonObject);
      const away = events.find((event) => event.presence === 'unavailable')!;
      const typing = events.find((event) => event.presence === 'composing')!;
      assert.deepEqual(
        [away.contact_phone, away.contact_lid, away.group, away.last_seen],
        [CONTACT, null, null, new Date(1_764_000_000_000).toISOString()],
      );
      assert.deepEqual(
        [typing.contact_phone, typing.contact_lid, typing.group, typing.last_seen],
        ['+447700900555', LID_CONTACT, { id: '120363333333333333@g.us' }, null],
      );
      // Read back: what the number last heard of each, stored with its event.
      const heard = async (who: string) => {
        const response = await linked.test.inject({
          method: 'GET',
          url: `/presence/${encodeURIComponent(who)}?from_phone=${encodeURIComponent(linked.number.phone)}`,
          headers: as(),
        });
        assert.equal(response.statusCode, 200, response.body);
        return response.json();
      };
      assert.deepEqual(await heard(CONTACT), {
        from_phone: linked.number.phone,
        phone: CONTACT,
        lid: null,
        presence: 'unavailable',
        group: null,
        last_seen: new Date(1_764_000_000_000).toISOString(),
        heard_at: away.timestamp,
      });
      const typist = await heard(LID_CONTACT_PHONE_JID);
      assert.deepEqual(
        [typist.phone, typist.presence, typist.group, typist.last_seen],
        ['+447700900555', 'composing', { id: '120363333333333333@g.us' }, null],
      );
      // A report without a last seen keeps the one the contact shared before.
      linked.socket.emit('presence.update', { id: CONTACT_JID, presences: { [CONTACT_JID]: { lastKnownPresence: 'available' } } });
      const back = await waitForValue(async () => {
        const now = await heard(CONTACT_JID);
        return now.presence === 'available' ? now : undefined;
      }, 'the contact to be heard available');
      assert.equal(back.last_seen, new Date(1_764_000_000_000).toISOString());
    });

    it("a profile is WhatsApp's three answers, the picture fetched from its CDN URL and stored; our own is set with updateProfileName, updateProfileStatus and updateProfilePicture", async () => {
      const cdn = http.createServer((request, response) => {
        cdnHits.push(request.url ?? '');
        response.writeHead(200, { 'content-type': 'image/jpeg' }).end(samples.jpeg());
      });
      const cdnHits: string[] = [];
      await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve));
      try {
        const port = (cdn.address() as { port: number }).port;
        linked.socket.profiles.set(CONTACT_JID, {
          pictureUrl: `http://127.0.0.1:${port}/v/t61/picture.jpg?oe=1&oh=signature`,
          about: 'Open 9 to 5',
          aboutSetAt: new Date('2026-01-02T03:04:05Z'),
          business: {
            description: 'Bakery',
            email: 'hi@example.com',
            category: 'Food',
            website: ['https://example.com'],
            address: '1 High St',
            business_hours: {},
          },
        });
        const response = await linked.test.inject({
          method: 'GET',
          url: `/contacts/${encodeURIComponent(CONTACT)}/profile?from_phone=${encodeURIComponent(linked.number.phone)}`,
          headers: as(),
        });
        assert.equal(response.statusCode, 200, response.body);
        const profile = response.json();
        assert.deepEqual(
          [profile.about, profile.about_set_at, profile.picture.mime_type, profile.picture.size],
          ['Open 9 to 5', '2026-01-02T03:04:05.000Z', 'image/jpeg', samples.jpeg().length],
        );
        assert.deepEqual(profile.business, {
          description: 'Bakery',
          category: 'Food',
          email: 'hi@example.com',
          websites: ['https://example.com'],
          address: '1 High St',
        });
        assert.deepEqual(linked.socket.profileQueries.sort(), [
          `business ${CONTACT_JID}`,
          `picture ${CONTACT_JID}`,
          `status ${CONTACT_JID}`,
        ]);
        assert.equal(cdnHits.length, 1);

        const none = await linked.test.inject({
          method: 'GET',
          url: `/contacts/%2B14155550199/profile?from_phone=${encodeURIComponent(linked.number.phone)}`,
          headers: as(),
        });
        assert.deepEqual(
          [none.json().picture, none.json().about, none.json().business],
          [null, null, null],
          'a 404 from WhatsApp is no picture, not an error',
        );
      } finally {
        cdn.close();
      }

      const media = await linked.test.inject({
        method: 'POST',
        url: '/media',
        headers: { ...as(), 'content-type': 'image/jpeg' },
        payload: samples.jpeg(512),
      });
      const set = await linked.test.inject({
        method: 'PATCH',
        url: `/numbers/${linked.number.id}/profile`,
        payload: { name: 'Acme', about: 'Hello', picture_media_id: media.json().media_id },
        headers: as(),
      });
      assert.equal(set.statusCode, 200, set.body);
      const ownJid = `${linked.number.phone.slice(1)}@s.whatsapp.net`;
      assert.deepEqual(linked.socket.ownProfileChanges, [
        { name: 'Acme' },
        { about: 'Hello' },
        { picture: { jid: ownJid, bytes: samples.jpeg(512) } },
      ]);
    });

    it('show_online is sent as available or unavailable at once, and the next socket connects with markOnlineOnConnect as set and renews the presence subscriptions', async () => {
      assert.equal(linked.whatsapp.options.at(-1)!.markOnlineOnConnect, false, 'a gateway is not a person: offline by default');
      const patch = (showOnline: boolean) =>
        linked.test.inject({ method: 'PATCH', url: `/numbers/${linked.number.id}`, payload: { show_online: showOnline }, headers: as() });
      assert.equal((await patch(true)).statusCode, 200);
      assert.deepEqual(linked.socket.presenceCalls.at(-1), { type: 'available', jid: undefined });
      const watched = '+447700900777';
      const subscribed = await linked.test.post(
        '/presence/subscribe',
        { from_phone: linked.number.phone, to_phone: watched },
        linked.apiKey,
      );
      assert.equal(subscribed.statusCode, 200, subscribed.body);
      linked.socket.closeWith(428);
      await waitFor('a new socket is made', () => linked.whatsapp.sockets.length === 2);
      assert.equal(linked.whatsapp.options.at(-1)!.markOnlineOnConnect, true);
      assert.deepEqual(linked.whatsapp.latest.presenceSubscriptions, [], 'nothing is asked of a socket before it is open');
      linked.whatsapp.latest.openAs(linked.number.phone.slice(1));
      await waitFor('it is connected again', () => linked.test.gateway.supervisor.sessionStatus(linked.number) === 'connected');
      // WhatsApp forgets a subscription with the connection that made it; the new one asks again.
      await waitFor('the subscriptions are renewed', () =>
        linked.whatsapp.latest.presenceSubscriptions.includes('447700900777@s.whatsapp.net'),
      );
      assert.equal((await patch(false)).statusCode, 200);
      assert.deepEqual(linked.whatsapp.latest.presenceCalls.at(-1), { type: 'unavailable', jid: undefined });
    });
  });
}
