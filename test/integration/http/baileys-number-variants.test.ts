/**
 * Lines that WhatsApp knows by another form than the one written (Brazil's ninth digit, Mexico's
 * 52 1, Argentina's 54 9; ADR 0050), over the real Baileys engine. WhatsApp's side answers as
 * Baileys' onWhatsApp does: only the accounts on WhatsApp, each by the JID it registered with.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proto, type WAMessage } from 'baileys';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';

/** Baileys 7's onWhatsApp answer for an account registered as `registeredDigits`. */
const registeredAs = (registeredDigits: string) => async () => [{ jid: `${registeredDigits}@s.whatsapp.net`, exists: true }];

function reply(text: string, fromDigits: string, id: string): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: { conversation: text }, messageTimestamp: Math.floor(Date.now() / 1000) });
  return Object.assign(info, { key: { remoteJid: `${fromDigits}@s.whatsapp.net`, fromMe: false, id } });
}

const CASES = [
  { country: 'Brazil, written with the ninth digit, registered without', written: '+5511987654321', registered: '551187654321' },
  { country: 'Brazil, written without the ninth digit, registered with', written: '+553188776655', registered: '5531988776655' },
  { country: 'Mexico, written +52, registered 52 1', written: '+525512345678', registered: '5215512345678' },
  { country: 'Mexico, written +52 1, registered 52', written: '+5215587654321', registered: '525587654321' },
  { country: 'Argentina, written +54, registered 54 9', written: '+541112345678', registered: '5491112345678' },
  { country: 'Argentina, written +54 9, registered 54', written: '+5491187654321', registered: '541187654321' },
];

for (const dialect of dialects) {
  describe(`a send to a line WhatsApp knows by its other form (${dialect})`, () => {
    let linked: LinkedBaileysNumber;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect);
    });
    after(() => linked.close());

    const send = (to: string, message: string) =>
      linked.test.post('/send_message', { from_phone: linked.number.phone, to_phone: to, message }, linked.apiKey);
    const chatsWith = async (phone: string) => {
      const listed = await linked.test.inject({
        method: 'GET',
        url: `/chats?from_phone=${encodeURIComponent(linked.number.phone)}&limit=100`,
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      assert.equal(listed.statusCode, 200, listed.body);
      return (listed.json().chats as { phone: string | null; chat_id: string }[]).filter((chat) => chat.phone === phone);
    };

    const received = (text: string) =>
      linked.test.gateway.store.db
        .selectFrom('messages')
        .select('from_phone')
        .where('number_id', '=', linked.number.id)
        .where('text', '=', text)
        .executeTakeFirst();

    for (const [index, { country, written, registered }] of CASES.entries()) {
      it(`${country}: goes to the JID WhatsApp answered, 200, and the reply joins the same chat`, async () => {
        linked.socket.answerOnWhatsApp = registeredAs(registered);
        const sendsBefore = linked.socket.sendCalls.length;
        const response = await send(written, `hello ${index}`);
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json().to_phone, `+${registered}`, 'the message names the person as WhatsApp does');
        assert.deepEqual(
          linked.socket.sendCalls.slice(sendsBefore).map((call) => call.jid),
          [`${registered}@s.whatsapp.net`],
        );

        await linked.arrives(
          reply(`answer ${index}`, registered, `VARIANT_REPLY_${index}`),
          async () => (await received(`answer ${index}`)) !== undefined,
        );
        assert.equal((await received(`answer ${index}`))?.from_phone, `+${registered}`);
        assert.equal((await chatsWith(`+${registered}`)).length, 1, 'one chat for the person');
        assert.equal((await chatsWith(written)).length, 0, 'no second chat under the written form');

        // The number now knows the person: the written form is resolved without asking WhatsApp.
        const asked = linked.socket.onWhatsAppCalls.length;
        linked.socket.answerOnWhatsApp = async () => [];
        const again = await send(written, `again ${index}`);
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(again.json().to_phone, `+${registered}`);
        assert.equal(linked.socket.onWhatsAppCalls.length, asked, 'the map answered');
      });
    }

    it('a check answers the phone asked with the wa_id WhatsApp named', async () => {
      linked.socket.answerOnWhatsApp = registeredAs('552187654321');
      const checked = await linked.test.post(
        '/check_numbers',
        { from_phone: linked.number.phone, phones: ['+5521987654321'] },
        linked.apiKey,
      );
      assert.equal(checked.statusCode, 200, checked.body);
      assert.deepEqual(checked.json().results, [
        { phone: '+5521987654321', on_whatsapp: true, wa_id: '552187654321@s.whatsapp.net', cached: false },
      ]);
    });

    it('an answer in one form never takes a phone asked in both forms', async () => {
      linked.socket.answerOnWhatsApp = registeredAs('552187650000');
      const checked = await linked.test.post(
        '/check_numbers',
        { from_phone: linked.number.phone, phones: ['+5521987650000', '+552187650000'] },
        linked.apiKey,
      );
      assert.deepEqual(
        checked.json().results.map((result: { phone: string; on_whatsapp: boolean }) => [result.phone, result.on_whatsapp]),
        [
          ['+5521987650000', false],
          ['+552187650000', true],
        ],
      );
    });
  });
}
