/**
 * Groups over the real Baileys engine: the HTTP stack, the services, the database and the engine
 * are real; WhatsApp's side is a fake socket that answers group queries as WhatsApp does, relays
 * a group send as Baileys does (participants from cachedGroupMetadata, else one metadata query),
 * and emits group messages and group events in Baileys' own shapes, by PN and by LID.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Boom } from '@hapi/boom';
import { proto } from 'baileys';
import type { GroupMetadata, WAMessage, WAMessageKey } from 'baileys';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import type { JsonObject } from '../../support/json.ts';

const GROUP = '120363111111111111@g.us';
const MEMBER = '+14155550100';
const MEMBER_JID = '14155550100@s.whatsapp.net';
const LID_MEMBER_LID = '123456789012345@lid';
const LID_MEMBER_PHONE = '+447700900777';

function groupMessage(text: string, id: string, key: Partial<WAMessageKey>): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: { conversation: text }, messageTimestamp: Math.floor(Date.now() / 1000) });
  return Object.assign(info, { key: { remoteJid: GROUP, fromMe: false, id, ...key } });
}

for (const dialect of dialects) {
  describe(`groups through a linked Baileys number (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;
    let ours: string;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: receiver.url('/hook'),
        eventTypes: ['message', 'group.updated'],
        messageScope: 'all',
      });
      linked.test.gateway.deliveryWorker.start();
      ours = `${linked.number.phone.slice(1)}@s.whatsapp.net`;
      // A LID-addressed group, as WhatsApp now makes them: one member known by LID and phone.
      const metadata: GroupMetadata = {
        id: GROUP,
        subject: 'Night shift',
        owner: undefined,
        addressingMode: 'lid' as GroupMetadata['addressingMode'],
        participants: [
          { id: ours, admin: 'superadmin' },
          { id: MEMBER_JID, admin: null },
          { id: LID_MEMBER_LID, phoneNumber: '447700900777@s.whatsapp.net', admin: null },
        ],
      };
      linked.socket.groups.set(GROUP, metadata);
    });
    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    const send = (body: object) => linked.test.post('/send_message', { from_phone: linked.number.phone, ...body }, linked.apiKey);
    const heard = async (match: (body: JsonObject) => boolean) => {
      const [request] = await receiver.waitForRequests(1, (each) => match(JSON.parse(each.body)));
      return JSON.parse(request!.body) as JsonObject;
    };

    it("100 sends to one group ask WhatsApp for its metadata at most once: Baileys reads it from the session's memory", async () => {
      const sends = await Promise.all(Array.from({ length: 100 }, (_, index) => send({ to_group: GROUP, message: `shift note ${index}` })));
      assert.deepEqual([...new Set(sends.map((response) => response.statusCode))], [200]);
      assert.equal(linked.socket.sendCalls.filter((call) => call.jid === GROUP).length, 100, 'each went to the group JID');
      assert.ok(
        linked.socket.groupMetadataCalls.filter((jid) => jid === GROUP).length <= 1,
        `asked ${linked.socket.groupMetadataCalls.length} times`,
      );
    });

    it('mentions go out as the JIDs the group knows its members by: the LID in a LID-addressed group', async () => {
      const response = await send({
        to_group: GROUP,
        message: '@14155550100 @447700900777 please confirm',
        mentions: [MEMBER, LID_MEMBER_PHONE],
      });
      assert.equal(response.statusCode, 200, response.body);
      const content = linked.socket.sendCalls.at(-1)!.content as { text: string; mentions?: string[] };
      assert.deepEqual([content.text, content.mentions], ['@14155550100 @447700900777 please confirm', [MEMBER_JID, LID_MEMBER_LID]]);
    });

    it('a group message arrives with the group and its sender, resolved from LID to phone where WhatsApp says, kept as LID where not', async () => {
      const stored = async (text: string) =>
        (await linked.test.gateway.store.db.selectFrom('messages').select('id').where('text', '=', text).executeTakeFirst()) !== undefined;
      await linked.arrives(
        groupMessage('by LID with phone', 'G_IN_1', { participant: LID_MEMBER_LID, participantAlt: '447700900777@s.whatsapp.net' }),
        () => stored('by LID with phone'),
      );
      const first = await heard((body) => body.event === 'message' && body.message === 'by LID with phone');
      assert.deepEqual(
        [first.from_phone, first.from_lid, first.to_phone, first.group],
        [LID_MEMBER_PHONE, LID_MEMBER_LID, linked.number.phone, { id: GROUP, subject: 'Night shift' }],
      );

      await linked.arrives(groupMessage('by LID alone', 'G_IN_2', { participant: '555555555555555@lid' }), () => stored('by LID alone'));
      const second = await heard((body) => body.event === 'message' && body.message === 'by LID alone');
      assert.deepEqual([second.from_phone, second.from_lid, second.group.id], [null, '555555555555555@lid', GROUP]);

      await linked.arrives(groupMessage('by phone', 'G_IN_3', { participant: MEMBER_JID }), () => stored('by phone'));
      const third = await heard((body) => body.event === 'message' && body.message === 'by phone');
      assert.deepEqual([third.from_phone, third.group.subject, third.mentions], [MEMBER, 'Night shift', []]);

      // Mentions arrive as JIDs, by LID in a LID-addressed group; the group's metadata gives the phone.
      const mentioning = Object.assign(
        proto.WebMessageInfo.fromObject({
          message: {
            extendedTextMessage: { text: 'over to you two', contextInfo: { mentionedJid: [LID_MEMBER_LID, ours, '555555555555555@lid'] } },
          },
          messageTimestamp: Math.floor(Date.now() / 1000),
        }),
        { key: { remoteJid: GROUP, fromMe: false, id: 'G_IN_4', participant: MEMBER_JID } },
      );
      await linked.arrives(mentioning, () => stored('over to you two'));
      const fourth = await heard((body) => body.event === 'message' && body.message === 'over to you two');
      assert.deepEqual(
        fourth.mentions,
        [LID_MEMBER_PHONE, linked.number.phone, '555555555555555@lid'],
        'our own number among them, and a LID left as it is',
      );
    });

    it('participant updates in PN and LID forms, and subject changes, become group.updated; our own removal is marked', async () => {
      linked.socket.emit('group-participants.update', {
        id: GROUP,
        author: LID_MEMBER_LID,
        authorPn: '447700900777@s.whatsapp.net',
        participants: [{ id: LID_MEMBER_LID, phoneNumber: '447700900777@s.whatsapp.net' }],
        action: 'remove',
      });
      const left = await heard((body) => body.event === 'group.updated' && body.change === 'left');
      assert.deepEqual(
        [left.participants, left.by_phone, left.by_lid, left.number_affected],
        [[{ phone: LID_MEMBER_PHONE, lid: LID_MEMBER_LID }], LID_MEMBER_PHONE, LID_MEMBER_LID, false],
      );

      linked.socket.emit('group-participants.update', {
        id: GROUP,
        author: ours,
        participants: [{ id: '999999999999999@lid' }],
        action: 'add',
      });
      const added = await heard((body) => body.event === 'group.updated' && body.change === 'added');
      assert.deepEqual(
        added.participants,
        [{ phone: null, lid: '999999999999999@lid' }],
        'a LID alone is never turned into a guessed phone',
      );

      linked.socket.emit('groups.update', [{ id: GROUP, subject: 'Day shift', author: MEMBER_JID }]);
      const renamed = await heard((body) => body.event === 'group.updated' && body.change === 'subject');
      assert.deepEqual([renamed.subject, renamed.group, renamed.by_phone], ['Day shift', { id: GROUP, subject: 'Day shift' }, MEMBER]);

      linked.socket.emit('group-participants.update', { id: GROUP, author: MEMBER_JID, participants: [{ id: ours }], action: 'remove' });
      const removed = await heard((body) => body.event === 'group.updated' && body.change === 'removed');
      assert.equal(removed.number_affected, true);
      linked.socket.groups.get(GROUP)!.participants = linked.socket.groups
        .get(GROUP)!
        .participants.filter((participant) => participant.id !== ours);
      const refused = await send({ to_group: GROUP, message: 'still there?' });
      assert.deepEqual([refused.statusCode, refused.json().error], [403, 'not_group_member']);
    });

    it("WhatsApp's rate-overlimit is a 429 with Retry-After, for a group read and for a send; the send pauses the number, and nothing is lost", async () => {
      const jid = '120363222222222222@g.us';
      linked.socket.groups.set(jid, {
        id: jid,
        subject: 'Busy',
        owner: undefined,
        participants: [
          { id: ours, admin: 'admin' },
          { id: MEMBER_JID, admin: null },
        ],
      });
      linked.socket.failNextGroupCall = new Boom('rate-overlimit', { data: 429 });
      const read = await linked.test.inject({
        method: 'GET',
        url: `/groups/${encodeURIComponent(jid)}?from_phone=${encodeURIComponent(linked.number.phone)}`,
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      assert.deepEqual([read.statusCode, read.json().error, read.headers['retry-after']], [429, 'rate_limited', '60']);

      const answerSend = linked.socket.answerSend;
      linked.socket.answerSend = async () => {
        throw new Boom('rate-overlimit', { data: 429 });
      };
      const refused = await send({ to_group: jid, message: 'too fast' });
      linked.socket.answerSend = answerSend;
      assert.deepEqual([refused.statusCode, refused.json().error, refused.headers['retry-after']], [429, 'rate_limited', '60']);
      const row = await linked.test.gateway.store.db
        .selectFrom('messages')
        .select(['status', 'error_code'])
        .where('text', '=', 'too fast')
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'failed', error_code: 'rate_limited' }, 'the refused send is recorded as failed, its unit returned');
      // A send's rate-overlimit pauses the number for a while (docs/number-pauses.md): the retry is
      // held back with the reason, until the pause lifts or the number is resumed.
      const held = await send({ to_group: jid, message: 'too fast' });
      assert.deepEqual([held.statusCode, held.json().error, held.json().meta?.reason], [503, 'number_paused', 'rate_limited'], held.body);
      const resumed = await linked.test.inject({
        method: 'POST',
        url: `/numbers/${encodeURIComponent(linked.number.phone)}/resume`,
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      assert.equal(resumed.statusCode, 200, resumed.body);
      const retried = await send({ to_group: jid, message: 'too fast' });
      assert.equal(retried.statusCode, 200, retried.body);
    });

    it("admin changes go to Baileys and come back with WhatsApp's per-participant answers", async () => {
      const jid = '120363333333333333@g.us';
      linked.socket.groups.set(jid, {
        id: jid,
        subject: 'Admins',
        owner: undefined,
        participants: [
          { id: ours, admin: 'superadmin' },
          { id: MEMBER_JID, admin: null },
        ],
      });
      const url = `/groups/${encodeURIComponent(jid)}`;
      const changed = await linked.test.post(
        `${url}/participants`,
        { from_phone: linked.number.phone, action: 'add', participants: [MEMBER, '+14155550403', '+14155550199'] },
        linked.apiKey,
      );
      assert.deepEqual(changed.json().results, [
        { phone: MEMBER, outcome: 'already_member' },
        { phone: '+14155550403', outcome: 'privacy_restricted' },
        { phone: '+14155550199', outcome: 'done' },
      ]);
      const link = await linked.test.post(`${url}/invite_link/revoke`, { from_phone: linked.number.phone }, linked.apiKey);
      assert.match(link.json().link, /^https:\/\/chat\.whatsapp\.com\/INVITE\d+$/);
      // WhatsApp refuses an admin's change when the number lost its admin role meanwhile.
      await linked.test.inject({
        method: 'GET',
        url: `${url}?from_phone=${encodeURIComponent(linked.number.phone)}`,
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      linked.socket.failNextGroupCall = new Boom('not-authorized', { statusCode: 401 });
      const notAdmin = await linked.test.post(
        `${url}/participants`,
        { from_phone: linked.number.phone, action: 'remove', participants: [MEMBER] },
        linked.apiKey,
      );
      assert.deepEqual([notAdmin.statusCode, notAdmin.json().error], [403, 'not_group_admin']);
      const left = await linked.test.post(`${url}/leave`, { from_phone: linked.number.phone }, linked.apiKey);
      assert.equal(left.statusCode, 200, left.body);
      assert.ok(linked.socket.groupCalls.includes(`leave ${jid}`));
    });
  });
}
