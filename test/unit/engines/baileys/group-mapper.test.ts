import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Boom } from '@hapi/boom';
import type { BaileysEventMap, GroupMetadata } from 'baileys';
import type { E164 } from '../../../../src/domain/phone.ts';
import type { EngineSendError } from '../../../../src/engines/engine.ts';
import { groupRefusal, participantOutcomes } from '../../../../src/engines/baileys/group-admin.ts';
import { mentionedMembers, participantChanges, settingsChanges, toGroup } from '../../../../src/engines/baileys/group-mapper.ts';

describe("group mapper: Baileys group metadata in the gateway's terms", () => {
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

describe('group events as changes', () => {
  const at = new Date('2026-11-25T12:00:00Z');
  const update = (
    action: BaileysEventMap['group-participants.update']['action'],
    author: string,
    participants: BaileysEventMap['group-participants.update']['participants'],
    authorPn?: string,
  ) => ({ id: '120363000000000001@g.us', author, ...(authorPn !== undefined && { authorPn }), participants, action });

  it('an add by an admin is added, and an add by the person themselves (an invite link) is joined', () => {
    assert.deepEqual(participantChanges(update('add', '447700900001@s.whatsapp.net', [{ id: '447700900002@s.whatsapp.net' }]), at), [
      {
        groupId: '120363000000000001@g.us',
        kind: 'added',
        participants: [{ phone: '+447700900002', lid: null }],
        actor: { phone: '+447700900001', lid: null },
        at,
      },
    ]);
    assert.equal(
      participantChanges(update('add', '447700900002@s.whatsapp.net', [{ id: '447700900002@s.whatsapp.net' }]), at)[0]?.kind,
      'joined',
    );
  });

  it('a removal of oneself is left, by LID with the phone beside it; a removal by another is removed', () => {
    const left = participantChanges(
      update(
        'remove',
        '111111111111111@lid',
        [{ id: '111111111111111@lid', phoneNumber: '447700900003@s.whatsapp.net' }],
        '447700900003@s.whatsapp.net',
      ),
      at,
    )[0]!;
    assert.deepEqual(
      [left.kind, left.participants, left.actor],
      ['left', [{ phone: '+447700900003', lid: '111111111111111@lid' }], { phone: '+447700900003', lid: '111111111111111@lid' }],
    );
    assert.equal(
      participantChanges(update('remove', '447700900001@s.whatsapp.net', [{ id: '222222222222222@lid' }]), at)[0]?.kind,
      'removed',
    );
  });

  it('promote and demote keep their names, and modify (an address changing) is no news', () => {
    assert.equal(
      participantChanges(update('promote', '447700900001@s.whatsapp.net', [{ id: '447700900002@s.whatsapp.net' }]), at)[0]?.kind,
      'promoted',
    );
    assert.equal(
      participantChanges(update('demote', '447700900001@s.whatsapp.net', [{ id: '447700900002@s.whatsapp.net' }]), at)[0]?.kind,
      'demoted',
    );
    assert.deepEqual(participantChanges(update('modify', '447700900001@s.whatsapp.net', [{ id: '447700900002@s.whatsapp.net' }]), at), []);
  });

  it('a groups.update entry gives a subject change and a description change, a cleared description as null', () => {
    const changes = settingsChanges(
      { id: '120363000000000001@g.us', subject: 'New name', desc: undefined, author: '447700900001@s.whatsapp.net' },
      at,
    );
    assert.deepEqual(
      changes.map((change) => [change.kind, change.subject, change.description]),
      [['subject', 'New name', undefined]],
    );
    const cleared = settingsChanges({ id: '120363000000000001@g.us', desc: null as unknown as string }, at);
    assert.deepEqual(
      cleared.map((change) => [change.kind, change.description]),
      [['description', null]],
    );
    assert.deepEqual(settingsChanges({ subject: 'no id' }, at), []);
  });
});

describe("an admin's change as WhatsApp answers it, participant by participant", () => {
  it("maps each code to an outcome, by the participant's digits", () => {
    const phones = ['+447700900001', '+447700900002', '+447700900003', '+447700900004', '+447700900005', '+447700900006'] as E164[];
    const answers = [
      { status: '200', jid: '447700900001@s.whatsapp.net' },
      { status: '403', jid: '447700900002@s.whatsapp.net' },
      { status: '408', jid: '447700900003@s.whatsapp.net' },
      { status: '409', jid: '447700900004@s.whatsapp.net' },
      { status: '404', jid: '447700900005@s.whatsapp.net' },
    ];
    assert.deepEqual(
      participantOutcomes('add', phones, answers).map((result) => result.outcome),
      ['done', 'privacy_restricted', 'recently_left', 'already_member', 'not_on_whatsapp', 'refused'],
    );
    assert.deepEqual(
      participantOutcomes('remove', phones, answers).map((result) => result.outcome),
      ['done', 'refused', 'recently_left', 'refused', 'not_member', 'refused'],
    );
  });

  it("turns WhatsApp's refusals into the port's: rate-overlimit, not an admin, not in the group", () => {
    const failures = [
      new Boom('rate-overlimit', { data: 429 }),
      new Boom('not-authorized', { statusCode: 401 }),
      new Boom('forbidden', { statusCode: 403 }),
      new Boom('item-not-found', { statusCode: 404 }),
    ];
    assert.deepEqual(
      failures.map((error) => (groupRefusal(error) as EngineSendError).failure),
      ['rate_limited', 'not_group_admin', 'not_group_admin', 'not_group_member'],
    );
    const other = new Error('socket closed');
    assert.equal(groupRefusal(other), other);
  });
});

describe('mentions in an arriving group message', () => {
  const metadata: GroupMetadata = {
    id: '120363000000000002@g.us',
    subject: 'LID group',
    owner: undefined,
    addressingMode: 'lid' as GroupMetadata['addressingMode'],
    participants: [{ id: '111111111111111@lid', phoneNumber: '447700900001@s.whatsapp.net' }, { id: '222222222222222@lid' }],
  };

  it("a PN JID is its phone, a LID the group knows is the member's phone, and any other LID stays a LID", () => {
    assert.deepEqual(
      mentionedMembers(metadata, ['447700900009@s.whatsapp.net', '111111111111111@lid', '222222222222222@lid', 'status@broadcast']),
      ['+447700900009', '+447700900001', '222222222222222@lid'],
    );
    assert.deepEqual(
      mentionedMembers(undefined, ['111111111111111@lid']),
      ['111111111111111@lid'],
      "without the group's metadata a LID is all there is",
    );
  });
});
