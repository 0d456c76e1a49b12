import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { newId } from '../../../src/domain/ids.ts';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { exchangedPostgresQuery, exchangedSqliteQuery, exchangedWithAny } from '../../../src/store/repositories/send-ledger.ts';
import { ExchangeProbe } from '../../../src/messaging/governor/exchange-probe.ts';
import { countingStatements, dialects, seedNumberRow, suiteStore } from '../../support/databases.ts';

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
      const known = async (phone: string, of = number) => (await exchangedWithAny(suite.store.db, of.accountId, of.id, [phone])).has(phone);
      assert.equal(await known('+14155550101'), true);
      assert.equal(await known('+14155550102'), true);
      assert.equal(await known('+14155550103'), false);
      assert.equal(await known('+14155550104'), false);
      assert.equal(await known('+14155550103', other), true);
    });

    it('several phones asked in one statement: the ones exchanged with, whatever their number or order', async () => {
      const number = await seedNumberRow(suite.store);
      const other = await seedNumberRow(suite.store, { accountId: number.accountId });
      await message(number, 'outbound', '+14155550201');
      await message(number, 'inbound', '+14155550202');
      await message(other, 'outbound', '+14155550203');
      const asked = ['+14155550204', '+14155550203', '+14155550202', '+14155550201', '+14155550201'];
      assert.deepEqual([...(await exchangedWithAny(suite.store.db, number.accountId, number.id, asked))].sort(), [
        '+14155550201',
        '+14155550202',
      ]);
      assert.deepEqual([...(await exchangedWithAny(suite.store.db, number.accountId, number.id, []))], []);
    });

    it("a number's sends asked at once share a statement: the first alone, those that came meanwhile together", async () => {
      const number = await seedNumberRow(suite.store);
      const other = await seedNumberRow(suite.store, { accountId: number.accountId });
      await message(number, 'outbound', '+14155550301');
      await message(other, 'inbound', '+14155550302');
      const counted = countingStatements(suite.store.db);
      const probe = new ExchangeProbe(counted.db);
      const phones = Array.from({ length: 20 }, (_, index) => `+141555503${String(index + 1).padStart(2, '0')}`);
      const answers = await Promise.all([
        ...phones.map((phone) => probe.exchanged(number.accountId, number.id, phone)),
        probe.exchanged(other.accountId, other.id, '+14155550302'),
        probe.exchanged(number.accountId, number.id, '+14155550301'),
      ]);
      assert.deepEqual(answers, [true, ...phones.slice(1).map(() => false), true, true]);
      assert.equal(counted.statements(), 3, 'one for the first phone, one for the 20 that came meanwhile, one for the other number');
    });

    if (dialect === 'sqlite') {
      it("looks the phone up in the account's phone indexes, never walking the number's history", async () => {
        const query = exchangedSqliteQuery(suite.store.db, {
          accountId: 'acc_x',
          numberId: 'num_x',
          phones: '["+14155550101","+14155550102"]',
        }).compile();
        const plan = await suite.store.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
        );
        const details = plan.rows.map((row) => row.detail).join('\n');
        assert.match(details, /messages_account_to_created_idx/);
        assert.match(details, /messages_account_from_created_idx/);
        assert.doesNotMatch(details, /messages_number/);
      });
    }

    if (dialect === 'postgres') {
      it("looks each phone up in the account's phone indexes even where one phone fills a column, never scanning the table", async () => {
        // Every outbound row's from_phone is the number's own: a probe planned for any phone at
        // once (a correlated one) took such a column for a match on every row and scanned.
        const number = await seedNumberRow(suite.store);
        const at = Date.now();
        const rows = Array.from({ length: 5_000 }, (_, index) => ({
          id: newId('message'),
          account_id: number.accountId,
          number_id: number.id,
          direction: 'outbound',
          from_phone: number.phone,
          to_phone: `+1415556${String(index).padStart(4, '0')}`,
          text: 'hello',
          content_kind: 'text',
          status: 'sent',
          created_at: at - index,
          updated_at: at - index,
        }));
        for (let first = 0; first < rows.length; first += 1_000) {
          await suite.store.db
            .insertInto('messages')
            .values(rows.slice(first, first + 1_000))
            .execute();
        }
        await sql`analyze messages`.execute(suite.store.db);
        const query = exchangedPostgresQuery(suite.store.db, {
          accountId: number.accountId,
          numberId: number.id,
          phones: ['+14155570001', '+14155570002'],
        }).compile();
        const plan = await suite.store.db.executeQuery<{ 'QUERY PLAN': string }>(
          CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
        );
        const details = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
        assert.match(details, /messages_account_to_created_idx/, details);
        assert.match(details, /messages_account_from_created_idx/, details);
        assert.doesNotMatch(details, /Seq Scan on messages/, details);
      });
    }
  });
}
