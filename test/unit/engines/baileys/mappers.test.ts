import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proto } from 'baileys';
import type { WAMessage, WAMessageKey, WAMessageUpdate } from 'baileys';
import type { E164 } from '../../../../src/domain/phone.ts';
import { lidNeedingLookup, mapIncomingMessage } from '../../../../src/engines/baileys/inbound-mapper.ts';
import type { LidResolver } from '../../../../src/engines/baileys/inbound-mapper.ts';
import { mapReceiptUpdate, toRecipientJid, toTextContent } from '../../../../src/engines/baileys/outbound-mapper.ts';

const SENDER_PN_JID = '447700900123@s.whatsapp.net';
const SENDER_PHONE = '+447700900123';
const SENDER_LID_JID = '123456789012345@lid';
const SENT_AT_SECONDS = 1_700_000_000;

const noMapping: LidResolver = () => undefined;

/**
 * A message as Baileys emits it in `messages.upsert`. The body goes through proto's own
 * `fromObject`; the key stays a plain object, because proto's MessageKey has no `remoteJidAlt`
 * or `participantAlt` and Baileys sets them on the decoded key exactly like this.
 */
function received(body: Record<string, unknown>, key: Partial<WAMessageKey> = {}): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: body, messageTimestamp: SENT_AT_SECONDS });
  return Object.assign(info, { key: { remoteJid: SENDER_PN_JID, fromMe: false, id: '3EB0C0FFEE', ...key } });
}

function receiptUpdate(
  status: proto.WebMessageInfo.Status,
  extra: Partial<WAMessageUpdate['update']> = {},
  fromMe = true,
): WAMessageUpdate {
  return { key: { remoteJid: SENDER_PN_JID, fromMe, id: '3EB0SENT' }, update: { status, ...extra } };
}

describe('inbound mapper: what counts as a text from a person', () => {
  it('a plain conversation text is taken with its sender, id and timestamp', () => {
    const decision = mapIncomingMessage(received({ conversation: 'hello' }), noMapping);
    assert.deepEqual(decision, {
      kind: 'message',
      fromPhone: SENDER_PHONE,
      fromLid: null,
      text: 'hello',
      contentKind: 'text',
      media: null,
      structured: null,
      pollSecret: null,
      engineMessageId: '3EB0C0FFEE',
      timestamp: new Date(SENT_AT_SECONDS * 1000),
      quotedEngineId: null,
      groupId: null,
      mentionedJids: [],
      referral: null,
    });
  });

  it('a group message is taken from the participant who wrote it, with the group, by PN or by LID with its phone beside it', () => {
    const byPhone = mapIncomingMessage(
      received({ conversation: 'hi all' }, { remoteJid: '120363025246125486@g.us', participant: SENDER_PN_JID }),
      noMapping,
    );
    assert.deepEqual(byPhone.kind === 'message' && [byPhone.fromPhone, byPhone.fromLid, byPhone.groupId, byPhone.text], [
      SENDER_PHONE,
      null,
      '120363025246125486@g.us',
      'hi all',
    ]);
    const byLid = mapIncomingMessage(
      received(
        { conversation: 'hi' },
        { remoteJid: '120363025246125486@g.us', participant: SENDER_LID_JID, participantAlt: SENDER_PN_JID },
      ),
      noMapping,
    );
    assert.deepEqual(byLid.kind === 'message' && [byLid.fromPhone, byLid.fromLid, byLid.groupId], [
      SENDER_PHONE,
      SENDER_LID_JID,
      '120363025246125486@g.us',
    ]);
    const lidOnly = mapIncomingMessage(
      received({ conversation: 'hi' }, { remoteJid: '120363025246125486@g.us', participant: SENDER_LID_JID }),
      noMapping,
    );
    assert.deepEqual(lidOnly.kind === 'message' && [lidOnly.fromPhone, lidOnly.fromLid], [null, SENDER_LID_JID]);
    const noParticipant = mapIncomingMessage(received({ conversation: 'hi' }, { remoteJid: '120363025246125486@g.us' }), noMapping);
    assert.deepEqual(noParticipant, { kind: 'skip', reason: 'unaddressable' });
  });

  it('an extended text (a reply, a link preview) is taken as text', () => {
    const decision = mapIncomingMessage(
      received({ extendedTextMessage: { text: 'see https://example.org', matchedText: 'https://example.org' } }),
      noMapping,
    );
    assert.equal(decision.kind, 'message');
    assert.equal(decision.kind === 'message' && decision.text, 'see https://example.org');
    assert.equal(decision.kind === 'message' && decision.contentKind, 'text');
  });

  const files: [string, Record<string, unknown>, { text: string; kind: string; mimeType: string | null; fileName: string | null }][] = [
    [
      'a photo with a caption',
      { imageMessage: { caption: 'a photo', mimetype: 'image/jpeg' } },
      { text: 'a photo', kind: 'image', mimeType: 'image/jpeg', fileName: null },
    ],
    [
      'a video with a caption',
      { videoMessage: { caption: 'a clip', mimetype: 'video/mp4' } },
      { text: 'a clip', kind: 'video', mimeType: 'video/mp4', fileName: null },
    ],
    [
      'a document with its name',
      { documentMessage: { caption: 'the invoice', fileName: 'invoice.pdf', mimetype: 'application/pdf' } },
      { text: 'the invoice', kind: 'document', mimeType: 'application/pdf', fileName: 'invoice.pdf' },
    ],
    [
      'a document inside its caption wrapper',
      { documentWithCaptionMessage: { message: { documentMessage: { caption: 'the invoice' } } } },
      { text: 'the invoice', kind: 'document', mimeType: null, fileName: null },
    ],
    [
      'a photo without a caption',
      { imageMessage: { mimetype: 'image/jpeg' } },
      { text: '', kind: 'image', mimeType: 'image/jpeg', fileName: null },
    ],
    [
      'a voice note (PTT audio)',
      { audioMessage: { ptt: true, mimetype: 'audio/ogg; codecs=opus' } },
      { text: '', kind: 'voice', mimeType: 'audio/ogg; codecs=opus', fileName: null },
    ],
    [
      'an audio file',
      { audioMessage: { ptt: false, mimetype: 'audio/mpeg' } },
      { text: '', kind: 'audio', mimeType: 'audio/mpeg', fileName: null },
    ],
    ['a sticker', { stickerMessage: { mimetype: 'image/webp' } }, { text: '', kind: 'sticker', mimeType: 'image/webp', fileName: null }],
  ];
  for (const [name, body, expected] of files) {
    it(`${name} is a ${expected.kind} message with its file described`, () => {
      const decision = mapIncomingMessage(received(body), noMapping);
      assert.equal(decision.kind, 'message');
      if (decision.kind !== 'message') return;
      assert.deepEqual(
        {
          text: decision.text,
          kind: decision.contentKind,
          mimeType: decision.media?.mimeType ?? null,
          fileName: decision.media?.fileName ?? null,
        },
        expected,
      );
      assert.equal(decision.media?.kind, expected.kind);
    });
  }

  it('a shared place arrives as a location, with its name, address and comment', () => {
    const decision = mapIncomingMessage(
      received({
        locationMessage: {
          degreesLatitude: 51.5033,
          degreesLongitude: -0.1196,
          name: 'London Eye',
          address: 'Riverside Building, London',
          url: 'https://maps.example/eye',
          comment: 'meet here',
        },
      }),
      noMapping,
    );
    assert.equal(decision.kind, 'message');
    if (decision.kind !== 'message') return;
    assert.deepEqual([decision.contentKind, decision.text], ['location', 'meet here']);
    assert.deepEqual(decision.structured, {
      location: {
        latitude: 51.5033,
        longitude: -0.1196,
        name: 'London Eye',
        address: 'Riverside Building, London',
        url: 'https://maps.example/eye',
      },
    });
    const live = mapIncomingMessage(
      received({ liveLocationMessage: { degreesLatitude: -33.86, degreesLongitude: 151.21, caption: 'on my way' } }),
      noMapping,
    );
    assert.deepEqual(live.kind === 'message' && [live.text, live.structured], [
      'on my way',
      { location: { latitude: -33.86, longitude: 151.21, name: null, address: null, url: null } },
    ]);
  });

  it('contact cards arrive with their names, their phones from the vCard, and the vCard itself', () => {
    const vcard =
      'BEGIN:VCARD\nVERSION:3.0\nFN:Ada Lovelace\nitem1.TEL;waid=447700900123:+44 7700 900123\nTEL;type=WORK:+1 (415) 555-0100\nTEL:not a number\nEND:VCARD';
    const single = mapIncomingMessage(received({ contactMessage: { displayName: 'Ada Lovelace', vcard } }), noMapping);
    assert.equal(single.kind, 'message');
    if (single.kind !== 'message') return;
    assert.deepEqual([single.contentKind, single.text], ['contact', '']);
    assert.deepEqual(single.structured, { contacts: [{ name: 'Ada Lovelace', phones: ['+447700900123', '+14155550100'], vcard }] });
    const several = mapIncomingMessage(
      received({
        contactsArrayMessage: {
          displayName: '2 contacts',
          contacts: [
            { displayName: 'Ada', vcard },
            { displayName: 'Bob', vcard: 'BEGIN:VCARD\nFN:Bob\nEND:VCARD' },
          ],
        },
      }),
      noMapping,
    );
    assert.deepEqual(several.kind === 'message' && several.structured, {
      contacts: [
        { name: 'Ada', phones: ['+447700900123', '+14155550100'], vcard },
        { name: 'Bob', phones: [], vcard: 'BEGIN:VCARD\nFN:Bob\nEND:VCARD' },
      ],
    });
  });

  it('a disappearing-message wrapper is unwrapped', () => {
    const decision = mapIncomingMessage(received({ ephemeralMessage: { message: { conversation: 'gone soon' } } }), noMapping);
    assert.equal(decision.kind === 'message' && decision.text, 'gone soon');
  });

  it('nested view-once and device-sent wrappers are unwrapped too', () => {
    const body = {
      ephemeralMessage: {
        message: { viewOnceMessage: { message: { imageMessage: { caption: 'once only' } } } },
      },
    };
    const decision = mapIncomingMessage(received(body), noMapping);
    assert.equal(decision.kind === 'message' && decision.contentKind, 'image');
    const deviceSent = { deviceSentMessage: { destinationJid: SENDER_PN_JID, message: { conversation: 'copied' } } };
    assert.equal(mapIncomingMessage(received(deviceSent), noMapping).kind, 'message');
  });
});

describe('inbound mapper: what is skipped, with the reason', () => {
  const skipped: [string, WAMessage, string][] = [
    ['our own message (from another of our devices)', received({ conversation: 'mine' }, { fromMe: true }), 'from_me'],
    ['a status update', received({ conversation: 'my story' }, { remoteJid: 'status@broadcast' }), 'status_broadcast'],
    ['a channel post', received({ conversation: 'news' }, { remoteJid: '120363144038483540@newsletter' }), 'newsletter'],
    ['a protocol message that names no message (a key share, say)', received({ protocolMessage: { type: 0 } }), 'protocol'],
    ['an edit that names no message', received({ protocolMessage: { type: 14, editedMessage: { conversation: 'fixed' } } }), 'protocol'],
    ['a history-sync notice', received({ protocolMessage: { type: 5, key: { id: 'X' } } }), 'protocol'],
    ['a reaction that names no message', received({ reactionMessage: { text: '👍' } }), 'reaction'],
    ['a poll vote', received({ pollUpdateMessage: { pollCreationMessageKey: { id: 'X' } } }), 'poll_update'],
    ['a location off the globe', received({ locationMessage: { degreesLatitude: 200, degreesLongitude: -0.12 } }), 'no_text'],
    ['a blank text', received({ conversation: '   ' }), 'no_text'],
    ['a message without content (a stub)', received({}), 'no_text'],
    ['a sender on a server we cannot address', received({ conversation: 'beep' }, { remoteJid: '867051314767696@bot' }), 'unaddressable'],
  ];
  for (const [name, message, reason] of skipped) {
    it(`${name} is skipped as ${reason}`, () => {
      assert.deepEqual(mapIncomingMessage(message, noMapping), { kind: 'skip', reason });
    });
  }
});

describe('inbound mapper: who sent it, by phone and by LID', () => {
  it('a PN-addressed sender gets its phone as E.164 and no LID', () => {
    const decision = mapIncomingMessage(received({ conversation: 'hi' }), noMapping);
    assert.equal(decision.kind === 'message' && decision.fromPhone, SENDER_PHONE);
    assert.equal(decision.kind === 'message' && decision.fromLid, null);
  });

  it('a PN-addressed sender whose alternative is a LID carries both', () => {
    const decision = mapIncomingMessage(received({ conversation: 'hi' }, { remoteJidAlt: SENDER_LID_JID }), noMapping);
    assert.equal(decision.kind === 'message' && decision.fromPhone, SENDER_PHONE);
    assert.equal(decision.kind === 'message' && decision.fromLid, SENDER_LID_JID);
  });

  it('a LID sender is resolved from remoteJidAlt without asking the mapping store', () => {
    const asked: string[] = [];
    const message = received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID, remoteJidAlt: SENDER_PN_JID });
    const decision = mapIncomingMessage(message, (lid) => {
      asked.push(lid);
      return undefined;
    });
    assert.equal(decision.kind === 'message' && decision.fromPhone, SENDER_PHONE);
    assert.equal(decision.kind === 'message' && decision.fromLid, SENDER_LID_JID);
    assert.deepEqual(asked, []);
    assert.equal(lidNeedingLookup(message), undefined);
  });

  it('a LID sender is resolved from participantAlt when that is what WhatsApp sent', () => {
    const message = received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID, participantAlt: SENDER_PN_JID });
    const decision = mapIncomingMessage(message, noMapping);
    assert.equal(decision.kind === 'message' && decision.fromPhone, SENDER_PHONE);
  });

  it('a LID sender without an alternative is resolved through the injected LID mapping', () => {
    const message = received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID });
    assert.equal(lidNeedingLookup(message), SENDER_LID_JID);
    const mapping = new Map([[SENDER_LID_JID, SENDER_PN_JID]]);
    const decision = mapIncomingMessage(message, (lid) => mapping.get(lid));
    assert.equal(decision.kind === 'message' && decision.fromPhone, SENDER_PHONE);
    assert.equal(decision.kind === 'message' && decision.fromLid, SENDER_LID_JID);
  });

  it('a LID sender that cannot be resolved is still taken: no phone, the LID set', () => {
    const decision = mapIncomingMessage(received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID }), noMapping);
    assert.equal(decision.kind, 'message');
    assert.equal(decision.kind === 'message' && decision.fromPhone, null);
    assert.equal(decision.kind === 'message' && decision.fromLid, SENDER_LID_JID);
  });

  it('a mapping that answers something other than a phone jid leaves the phone unresolved', () => {
    const decision = mapIncomingMessage(received({ conversation: 'hi' }, { remoteJid: SENDER_LID_JID }), () => '999@lid');
    assert.equal(decision.kind === 'message' && decision.fromPhone, null);
  });

  it('a device suffix on a jid does not leak into the phone or the LID', () => {
    const decision = mapIncomingMessage(
      received({ conversation: 'hi' }, { remoteJid: '123456789012345:7@lid', remoteJidAlt: '447700900123:7@s.whatsapp.net' }),
      noMapping,
    );
    assert.equal(decision.kind === 'message' && decision.fromPhone, SENDER_PHONE);
    assert.equal(decision.kind === 'message' && decision.fromLid, SENDER_LID_JID);
  });
});

describe('outbound mapper: what we send', () => {
  it('an E.164 recipient becomes its digits at s.whatsapp.net', () => {
    assert.equal(toRecipientJid('+447700900123' as E164), '447700900123@s.whatsapp.net');
  });

  it('a text becomes Baileys text content', () => {
    assert.deepEqual(toTextContent('hello'), { text: 'hello' });
  });
});

describe('outbound mapper: receipts for what we sent', () => {
  const Status = proto.WebMessageInfo.Status;
  const mapped: [string, proto.WebMessageInfo.Status, string][] = [
    ['SERVER_ACK', Status.SERVER_ACK, 'sent'],
    ['DELIVERY_ACK', Status.DELIVERY_ACK, 'delivered'],
    ['READ', Status.READ, 'read'],
    ['PLAYED', Status.PLAYED, 'read'],
  ];
  for (const [name, status, expected] of mapped) {
    it(`${name} becomes ${expected}`, () => {
      assert.deepEqual(mapReceiptUpdate(receiptUpdate(status)), { engineMessageId: '3EB0SENT', status: expected });
    });
  }

  it('ERROR becomes failed, with the code WhatsApp gave', () => {
    const update = receiptUpdate(Status.ERROR, { messageStubParameters: ['463', 'Your account has been restricted'] });
    assert.deepEqual(mapReceiptUpdate(update), { engineMessageId: '3EB0SENT', status: 'failed', errorCode: '463' });
  });

  it('ERROR without a code still becomes failed', () => {
    assert.deepEqual(mapReceiptUpdate(receiptUpdate(Status.ERROR)), { engineMessageId: '3EB0SENT', status: 'failed' });
  });

  it('PENDING is no receipt', () => {
    assert.equal(mapReceiptUpdate(receiptUpdate(Status.PENDING)), undefined);
  });

  it('an update without a status (an edit, a reaction) is no receipt', () => {
    const update: WAMessageUpdate = { key: { remoteJid: SENDER_PN_JID, fromMe: true, id: '3EB0SENT' }, update: { starred: true } };
    assert.equal(mapReceiptUpdate(update), undefined);
  });

  it('an update about a message we received is ignored, whatever its status', () => {
    for (const status of [Status.SERVER_ACK, Status.DELIVERY_ACK, Status.READ, Status.PLAYED, Status.ERROR]) {
      assert.equal(mapReceiptUpdate(receiptUpdate(status, {}, false)), undefined);
    }
  });
});

describe('inbound mapper: what one message does to another', () => {
  const target = { remoteJid: SENDER_PN_JID, fromMe: true, id: '3EB0TARGET' };
  const Type = proto.Message.ProtocolMessage.Type;
  const acts: [string, Record<string, unknown>, unknown][] = [
    ['a reaction', { reactionMessage: { key: target, text: '👍' } }, { kind: 'react', emoji: '👍' }],
    ['a reaction taken away (empty text)', { reactionMessage: { key: target, text: '' } }, { kind: 'react', emoji: '' }],
    ['a revocation', { protocolMessage: { type: Type.REVOKE, key: target } }, { kind: 'revoke' }],
    [
      'an edit of a text',
      { protocolMessage: { type: Type.MESSAGE_EDIT, key: target, editedMessage: { conversation: 'fixed' } } },
      { kind: 'edit', text: 'fixed' },
    ],
    [
      'an edit of a caption',
      { protocolMessage: { type: Type.MESSAGE_EDIT, key: target, editedMessage: { imageMessage: { caption: 'new caption' } } } },
      { kind: 'edit', text: 'new caption' },
    ],
  ];
  for (const [name, body, action] of acts) {
    it(`${name} names its target and who acted`, () => {
      const decision = mapIncomingMessage(received(body), noMapping);
      assert.deepEqual(decision, {
        kind: 'action',
        fromMe: false,
        fromPhone: SENDER_PHONE,
        fromLid: null,
        targetEngineId: '3EB0TARGET',
        action,
        timestamp: new Date(SENT_AT_SECONDS * 1000),
        groupId: null,
      });
    });
  }

  it('our own phone revoking a message is an action from us; a LID-addressed chat keeps its LID', () => {
    const mine = mapIncomingMessage(received({ protocolMessage: { type: Type.REVOKE, key: target } }, { fromMe: true }), noMapping);
    assert.equal(mine.kind === 'action' && mine.fromMe, true);
    const byLid = mapIncomingMessage(
      received({ reactionMessage: { key: target, text: '❤️' } }, { remoteJid: SENDER_LID_JID, remoteJidAlt: SENDER_PN_JID }),
      noMapping,
    );
    assert.deepEqual(byLid.kind === 'action' && [byLid.fromPhone, byLid.fromLid], [SENDER_PHONE, SENDER_LID_JID]);
  });

  it('a reply carries the quoted id, from a text or a media message', () => {
    const text = mapIncomingMessage(received({ extendedTextMessage: { text: 'yes', contextInfo: { stanzaId: 'Q1' } } }), noMapping);
    const photo = mapIncomingMessage(received({ imageMessage: { caption: 'this one', contextInfo: { stanzaId: 'Q2' } } }), noMapping);
    assert.deepEqual([text.kind === 'message' && text.quotedEngineId, photo.kind === 'message' && photo.quotedEngineId], ['Q1', 'Q2']);
  });
});
