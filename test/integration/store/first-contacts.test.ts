import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { newId } from '../../../src/domain/ids.ts';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { exchangedWithQuery, hasExchangedWith } from '../../../src/store/repositories/send-queue.ts';
import { dialects, seedNumberRow, suiteStore } from '../../support/databases.ts';

for (const dialect of dialects) {
  describe(`the first-contact probe (${dialect})`, () => {
    const suite = suiteStore(dialect);

    async function message(number: WhatsAppNumber, direction: 'outbound' | 'inbound', other: string): Promise<void> {
      const at = Date.now();
      await suite.store.db
        .insertInto('messages')
        .values({
          id: newId('message'),
          account_id: number.accountId,
          number_id: number.id,
          direction,
          from_phone: direction === 'outbound' ? number.phone : other,
          to_phone: direction === 'outbound' ? other : number.phone,
          text: 'hello',
          content_kind: 'text',
          status: direction === 'outbound' ? 'sent' : 'received',
          created_at: at,
          updated_at: at,
        })
        .execute();
    }

    it('a phone the number wrote to or heard from is known; another, or one known to another number, is a first contact', async () => {
      const number = await seedNumberRow(suite.store);
      const other = await seedNumberRow(suite.store, { accountId: number.accountId });
      await message(number, 'outbound', '+14155550101');
      await message(number, 'inbound', '+14155550102');
      await message(other, 'outbound', '+14155550103');
      const known = (phone: string, of = number) => hasExchangedWith(suite.store.db, of.accountId, of.id, phone as E164);
      assert.equal(await known('+14155550101'), true);
      assert.equal(await known('+14155550102'), true);
      assert.equal(await known('+14155550103'), false);
      assert.equal(await known('+14155550104'), false);
      assert.equal(await known('+14155550103', other), true);
    });

    if (dialect === 'sqlite') {
      it("looks the phone up in the account's phone indexes, never walking the number's history", async () => {
        const query = exchangedWithQuery(suite.store.db, 'acc_x', 'num_x', '+14155550101' as E164).compile();
        const plan = await suite.store.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
        );
        const details = plan.rows.map((row) => row.detail).join('\n');
        assert.match(details, /messages_account_to_created_idx/);
        assert.match(details, /messages_account_from_created_idx/);
        assert.doesNotMatch(details, /messages_number/);
      });
    }
  });
}
