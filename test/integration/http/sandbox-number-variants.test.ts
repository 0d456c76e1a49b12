/**
 * The sandbox rehearses lines WhatsApp knows by another form than the one written (ADR 0050):
 * its phones answer checks, take messages and write back under their registered form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

for (const dialect of dialects) {
  describe(`sandbox phones registered under their other form (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let ours: string;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway);
      ours = account.phones[0]!;
    });
    after(() => test?.close());

    const chatsWith = async (phone: string) => {
      const listed = await test.inject({
        method: 'GET',
        url: `/chats?from_phone=${encodeURIComponent(ours)}&limit=100`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      return (listed.json().chats as { phone: string | null }[]).filter((chat) => chat.phone === phone);
    };

    it('a Brazilian mobile written with the ninth digit answers, receives and writes as its 12-digit account, in one chat', async () => {
      const checked = await test.post('/check_numbers', { from_phone: ours, phones: ['+5531988776655'] }, account.apiKey);
      assert.equal(checked.json().results[0].wa_id, '553188776655@s.whatsapp.net');
      const sent = await test.post('/send_message', { from_phone: ours, to_phone: '+5531988776655', message: 'oi' }, account.apiKey);
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal(sent.json().to_phone, '+553188776655');
      const received = await test.post(
        '/sandbox/receive',
        { from_phone: '+5531988776655', to_phone: ours, message: 'olá' },
        account.apiKey,
      );
      assert.equal(received.statusCode, 200, received.body);
      assert.equal(received.json().from_phone, '+553188776655');
      assert.equal((await chatsWith('+553188776655')).length, 1);
      assert.equal((await chatsWith('+5531988776655')).length, 0);
    });

    it('a Mexican mobile written +52 is the +52 1 account', async () => {
      const sent = await test.post('/send_message', { from_phone: ours, to_phone: '+525512340000', message: 'hola' }, account.apiKey);
      assert.equal(sent.json().to_phone, '+5215512340000');
      const received = await test.post(
        '/sandbox/receive',
        { from_phone: '+525512340000', to_phone: ours, message: 'hola' },
        account.apiKey,
      );
      assert.equal(received.json().from_phone, '+5215512340000');
    });
  });
}
