import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { E164 } from '../../../src/domain/phone.ts';
import { findContact, lidOfPhone, noteContact } from '../../../src/store/repositories/contacts.ts';
import { dialects, seedNumberRow, suiteStore } from '../../support/databases.ts';

// The contact note is a compiled statement whose values are bound whole, so "keep what is
// stored" is said in SQL; these pin what a later, less informed note leaves in place.

for (const dialect of dialects) {
  describe(`a contact note keeps what it does not know (${dialect})`, () => {
    const suite = suiteStore(dialect);

    it('a note without a name, a time or saved leaves the stored ones; one with them replaces them', async () => {
      const { store } = suite;
      const number = await seedNumberRow(store);
      const ref = { numberId: number.id, accountId: number.accountId };
      const phone = '+14155550123' as E164;
      const first = new Date(1_000_000);
      await noteContact(store.db, ref, { lid: null, phone, whatsappName: 'Ada', saved: true, messageAt: first }, first);
      await noteContact(store.db, ref, { lid: null, phone }, new Date(2_000_000));
      let contact = await findContact(store.db, number.id, { phone });
      assert.equal(contact?.whatsappName, 'Ada');
      assert.equal(contact?.saved, true);
      assert.equal(contact?.lastMessageAt?.getTime(), first.getTime());

      const later = new Date(3_000_000);
      await noteContact(store.db, ref, { lid: null, phone, whatsappName: 'Ada L.', saved: false, messageAt: later }, later);
      contact = await findContact(store.db, number.id, { phone });
      assert.equal(contact?.whatsappName, 'Ada L.');
      assert.equal(contact?.saved, true, 'a note that does not say saved never unsaves');
      assert.equal(contact?.lastMessageAt?.getTime(), later.getTime());
    });

    it('a person known by LID is noted on the LID row, and the LID of a phone is found once stored', async () => {
      const { store } = suite;
      const number = await seedNumberRow(store);
      const ref = { numberId: number.id, accountId: number.accountId };
      const lid = '123456789@lid';
      const phone = '+14155550124' as E164;
      await noteContact(store.db, ref, { lid, phone: null, whatsappName: 'Grace' }, new Date(1_000));
      await noteContact(store.db, ref, { lid, phone: null, whatsappName: null }, new Date(2_000));
      assert.equal((await findContact(store.db, number.id, { lid }))?.whatsappName, 'Grace');
      assert.equal(await lidOfPhone(store.db, number.id, phone), undefined);
      // A first note that knows both stores both (learning a phone later is learnIdentity's).
      const both = { lid: '987654321@lid', phone: '+14155550125' as E164 };
      await noteContact(store.db, ref, both, new Date(3_000));
      assert.equal(await lidOfPhone(store.db, number.id, both.phone), both.lid);
    });
  });
}
