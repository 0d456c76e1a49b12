import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GroupMetadata } from 'baileys';
import { toGroup } from '../../../src/engines/baileys/group-mapper.ts';

describe('group mapper: Baileys group metadata in the gateway\'s terms', () => {
  const metadata: GroupMetadata = {
    id: '120363025246125486@g.us',
    subject: 'Night shift',
    desc: 'Handover notes',
    owner: '447700900123@s.whatsapp.net',
    addressingMode: 'lid' as GroupMetadata['addressingMode'],
    participants: [
      { id: '447700900123@s.whatsapp.net', admin: 'superadmin' },
      { id: '447700900124:3@s.whatsapp.net', isAdmin: true },
      { id: '111111111111111@lid', phoneNumber: '14155550100@s.whatsapp.net', admin: null },
      { id: '222222222222222@lid' },
      { id: '14155550101@s.whatsapp.net', lid: '333333333333333@lid', admin: 'admin' },
    ],
  };

  it('keeps the id, subject and description, and each participant by phone, LID and role', () => {
    assert.deepEqual(toGroup(metadata), {
      id: '120363025246125486@g.us',
      subject: 'Night shift',
      description: 'Handover notes',
      participants: [
        { phone: '+447700900123', lid: null, role: 'superadmin' },
        { phone: '+447700900124', lid: null, role: 'admin' },
        { phone: '+14155550100', lid: '111111111111111@lid', role: 'member' },
        { phone: null, lid: '222222222222222@lid', role: 'member' },
        { phone: '+14155550101', lid: '333333333333333@lid', role: 'admin' },
      ],
    });
  });

  it('a group without a description has null, not an empty string', () => {
    assert.equal(toGroup({ ...metadata, desc: undefined }).description, null);
  });
});
