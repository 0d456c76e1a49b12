import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { aesEncryptGCM, hmacSign, proto } from 'baileys';
import type { WAMessage, WAMessageKey } from 'baileys';
import { mapIncomingMessage } from '../../../../src/engines/baileys/inbound-mapper.ts';
import { toMediaContent, toStructuredContent } from '../../../../src/engines/baileys/outbound-mapper.ts';
import { openPollVote } from '../../../../src/engines/baileys/poll-votes.ts';

const SENDER_PN_JID = '447700900123@s.whatsapp.net';
const SENDER_LID_JID = '123456789012345@lid';
const OUR_JID = '14155550100@s.whatsapp.net';

function received(body: Record<string, unknown>, key: Partial<WAMessageKey> = {}): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: body, messageTimestamp: 1_700_000_000 });
  return Object.assign(info, { key: { remoteJid: SENDER_PN_JID, fromMe: false, id: '3EB0C0FFEE', ...key } });
}

/** A vote as a phone encrypts it: Baileys' decryptPollVote run backwards. */
function encryptVote(options: string[], secret: Uint8Array, pollId: string, creatorJid: string, voterJid: string) {
  const plain = proto.Message.PollVoteMessage.encode({
    selectedOptions: options.map((option) => createHash('sha256').update(option).digest()),
  }).finish();
  const sign = Buffer.concat([
    Buffer.from(pollId),
    Buffer.from(creatorJid),
    Buffer.from(voterJid),
    Buffer.from('Poll Vote'),
    new Uint8Array([1]),
  ]);
  const key = hmacSign(sign, hmacSign(secret, new Uint8Array(32), 'sha256'), 'sha256');
  const encIv = randomBytes(12);
  return { encPayload: aesEncryptGCM(plain, key, encIv, Buffer.from(`${pollId}\u0000${voterJid}`)), encIv };
}

describe("Baileys rich content: polls, places, cards and view-once, from Baileys' own protos", () => {
  it('a PollCreationMessage (v1 and v3) is a poll with its secret; 0 selectable means all', () => {
    const secret = randomBytes(32);
    const v3 = mapIncomingMessage(
      received({
        pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'Yes' }, { optionName: 'No' }], selectableOptionsCount: 1 },
        messageContextInfo: { messageSecret: secret },
      }),
      () => undefined,
    );
    assert.ok(v3.kind === 'message');
    assert.deepEqual(
      [v3.contentKind, v3.structured, v3.pollSecret],
      ['poll', { poll: { question: 'Lunch?', options: ['Yes', 'No'], selectableCount: 1 } }, secret.toString('base64')],
    );
    const v1 = mapIncomingMessage(
      received({
        pollCreationMessage: {
          name: 'Pick',
          options: [{ optionName: 'a' }, { optionName: 'b' }, { optionName: 'c' }],
          selectableOptionsCount: 0,
        },
      }),
      () => undefined,
    );
    assert.deepEqual(v1.kind === 'message' && [v1.structured, v1.pollSecret], [
      { poll: { question: 'Pick', options: ['a', 'b', 'c'], selectableCount: 3 } },
      null,
    ]);
  });

  it("a PollUpdateMessage is a vote naming its poll, which openPollVote reads with the poll's secret under PN or LID jids", () => {
    const secret = randomBytes(32);
    // The voter's phone wrote the jids as LIDs; the key gives both forms.
    const vote = encryptVote(['b'], secret, 'POLL1', SENDER_LID_JID, SENDER_LID_JID);
    const decision = mapIncomingMessage(
      received(
        { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: SENDER_PN_JID, fromMe: false, id: 'POLL1' }, vote } },
        { remoteJidAlt: SENDER_LID_JID },
      ),
      () => undefined,
    );
    assert.ok(decision.kind === 'poll_vote');
    assert.deepEqual([decision.pollEngineId, decision.fromPhone, decision.fromLid], ['POLL1', '+447700900123', SENDER_LID_JID]);
    const poll = { pollEngineId: 'POLL1', secret: secret.toString('base64'), options: ['a', 'b', 'c'] };
    assert.deepEqual(openPollVote(decision.vote, poll, decision.creatorJids, decision.voterJids), ['b']);
    assert.equal(
      openPollVote(decision.vote, { ...poll, secret: randomBytes(32).toString('base64') }, decision.creatorJids, decision.voterJids),
      undefined,
    );
    assert.deepEqual(openPollVote(encryptVote([], secret, 'POLL1', OUR_JID, SENDER_PN_JID), poll, [OUR_JID], [SENDER_PN_JID]), []);
  });

  it('view-once arrives wrapped (viewOnceMessage, V2, V2Extension, inside an ephemeral one) or flagged', () => {
    const image = { imageMessage: { mimetype: 'image/jpeg', caption: 'once' } };
    for (const body of [
      { viewOnceMessage: { message: image } },
      { viewOnceMessageV2: { message: image } },
      { viewOnceMessageV2Extension: { message: { audioMessage: { ptt: true, mimetype: 'audio/ogg' } } } },
      { ephemeralMessage: { message: { viewOnceMessageV2: { message: image } } } },
      { imageMessage: { ...image.imageMessage, viewOnce: true } },
    ]) {
      const decision = mapIncomingMessage(received(body), () => undefined);
      assert.deepEqual(decision.kind === 'message' && decision.structured, { viewOnce: true }, JSON.stringify(body));
    }
    const plain = mapIncomingMessage(received(image), () => undefined);
    assert.equal(plain.kind === 'message' && plain.structured, null);
  });

  it("a text with the preview its sender's app attached arrives with link_preview, in the shape sends use", () => {
    const decision = mapIncomingMessage(
      received({
        extendedTextMessage: {
          text: 'see https://example.org/menu',
          matchedText: 'https://example.org/menu',
          title: 'Menu',
          description: 'Lunch',
        },
      }),
      () => undefined,
    );
    assert.deepEqual(decision.kind === 'message' && decision.structured, {
      linkPreview: { url: 'https://example.org/menu', title: 'Menu', description: 'Lunch' },
    });
    const bare = mapIncomingMessage(received({ extendedTextMessage: { text: 'see https://example.org/' } }), () => undefined);
    assert.equal(bare.kind === 'message' && bare.structured, null);
  });

  it("places, cards and polls go out as Baileys' LocationMessage, ContactsArrayMessage and poll content; files view-once", () => {
    assert.deepEqual(
      toStructuredContent({ location: { latitude: 1.5, longitude: -2, name: null, address: 'Main St', url: null } }, '', new Uint8Array()),
      { location: { degreesLatitude: 1.5, degreesLongitude: -2, address: 'Main St' } },
    );
    assert.deepEqual(
      toStructuredContent({ contacts: [{ name: 'Ada', phones: [], vcard: 'BEGIN:VCARD\nEND:VCARD' }] }, '', new Uint8Array()),
      { contacts: { displayName: 'Ada', contacts: [{ displayName: 'Ada', vcard: 'BEGIN:VCARD\nEND:VCARD' }] } },
    );
    const secret = randomBytes(32);
    assert.deepEqual(toStructuredContent({ poll: { question: 'Q', options: ['a', 'b'], selectableCount: 2 } }, '', secret), {
      poll: { name: 'Q', values: ['a', 'b'], selectableCount: 2, messageSecret: secret },
    });
    const media = { kind: 'video' as const, mimeType: 'video/mp4', fileName: null, bytes: Buffer.from('x') };
    assert.equal((toMediaContent(media, '', true) as { viewOnce?: boolean }).viewOnce, true);
    assert.equal((toMediaContent(media, '') as { viewOnce?: boolean }).viewOnce, undefined);
  });
});
