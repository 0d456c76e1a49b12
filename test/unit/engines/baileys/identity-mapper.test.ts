import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GroupMetadata, LIDMapping } from 'baileys';
import { identitiesOfGroup, identityOfCheck, identityOfMapping } from '../../../../src/engines/baileys/identity-mapper.ts';

describe('identity mapper: what Baileys tells of a LID and its phone', () => {
  it('a LID mapping, with or without device parts, is the LID and the E.164 phone', () => {
    const mapping: LIDMapping = { lid: '123456789012345:3@lid', pn: '14155550100:3@s.whatsapp.net' };
    assert.deepEqual(identityOfMapping(mapping), { lid: '123456789012345@lid', phone: '+14155550100' });
    assert.deepEqual(identityOfMapping({ lid: '123456789012345@hosted.lid', pn: '14155550100@hosted' }), {
      lid: '123456789012345@lid',
      phone: '+14155550100',
    });
  });

  it('a mapping with either side wrong teaches nothing', () => {
    assert.equal(identityOfMapping({ lid: '14155550100@s.whatsapp.net', pn: '14155550100@s.whatsapp.net' }), undefined);
    assert.equal(identityOfMapping({ lid: '123456789012345@lid', pn: '123456789012345@lid' }), undefined);
    assert.equal(identityOfMapping({ lid: '123456789012345@lid', pn: '12@s.whatsapp.net' }), undefined);
    assert.equal(identityOfMapping({}), undefined);
  });

  it("group participants named both ways are learned, in either of Baileys' shapes", () => {
    const metadata: Pick<GroupMetadata, 'participants'> = {
      participants: [
        { id: '111111111111111@lid', phoneNumber: '14155550101@s.whatsapp.net' },
        { id: '14155550102@s.whatsapp.net', lid: '222222222222222@lid' },
        { id: '333333333333333@lid' },
        { id: '14155550104@s.whatsapp.net' },
      ],
    };
    assert.deepEqual(identitiesOfGroup(metadata), [
      { lid: '111111111111111@lid', phone: '+14155550101' },
      { lid: '222222222222222@lid', phone: '+14155550102' },
    ]);
  });

  it('a number check teaches only an answer that exists and names a LID', () => {
    assert.deepEqual(identityOfCheck({ jid: '14155550100@s.whatsapp.net', exists: true, lid: '123456789012345@lid' }), {
      lid: '123456789012345@lid',
      phone: '+14155550100',
    });
    assert.equal(identityOfCheck({ jid: '14155550100@s.whatsapp.net', exists: true }), undefined);
    assert.equal(identityOfCheck({ jid: '14155550100@s.whatsapp.net', exists: false, lid: '123456789012345@lid' }), undefined);
  });
});
