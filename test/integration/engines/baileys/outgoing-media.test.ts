import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { generateWAMessageContent, type proto, type WAMediaUploadFunction } from 'baileys';
import type { MediaKind } from '../../../../src/domain/media.ts';
import { toMediaContent } from '../../../../src/engines/baileys/outbound-mapper.ts';
import { samples } from '../../../support/media-samples.ts';

/**
 * Each kind as Baileys itself turns our content into the protobuf WhatsApp receives: the file is
 * read from the stream, encrypted and "uploaded" (here, to a function that keeps the encrypted
 * bytes), and the message carries what a phone needs to show it.
 */
async function protoOf(kind: MediaKind, mimeType: string, bytes: Buffer, caption: string, fileName: string | null = null) {
  const uploaded: number[] = [];
  const upload: WAMediaUploadFunction = async (encFilePath) => {
    uploaded.push(fs.statSync(encFilePath).size);
    return { mediaUrl: 'https://mmg.whatsapp.net/d/f/test.enc', directPath: '/v/t62/test.enc' };
  };
  const content = toMediaContent({ kind, mimeType, fileName, bytes: { stream: Readable.from([bytes]) } }, caption);
  const message = await generateWAMessageContent(content, { upload });
  assert.equal(uploaded.length, 1, 'the file was encrypted and uploaded once');
  assert.ok(uploaded[0]! > bytes.length, 'what went up is the encrypted file, padded and signed');
  return message;
}

const common = (
  media: { url?: string | null; mediaKey?: Uint8Array | null; fileSha256?: Uint8Array | null; fileLength?: unknown } | null | undefined,
  size: number,
) => {
  assert.ok(media, 'the kind has its own message');
  assert.equal(media.url, 'https://mmg.whatsapp.net/d/f/test.enc');
  assert.equal(media.mediaKey?.length, 32, 'a fresh media key');
  assert.equal(media.fileSha256?.length, 32);
  assert.equal(Number(media.fileLength), size);
};

describe('outbound media, as Baileys builds each kind from our content', () => {
  it('an image with its caption', async () => {
    const message: proto.IMessage = await protoOf('image', 'image/png', samples.png, 'the label');
    common(message.imageMessage, samples.png.length);
    assert.deepEqual([message.imageMessage!.caption, message.imageMessage!.mimetype], ['the label', 'image/png']);
  });

  it('a document with its file name and caption', async () => {
    const pdf = samples.pdf(3000);
    const message = await protoOf('document', 'application/pdf', pdf, 'Your invoice', 'inv-1042.pdf');
    common(message.documentMessage, pdf.length);
    assert.deepEqual(
      [message.documentMessage!.fileName, message.documentMessage!.caption, message.documentMessage!.mimetype],
      ['inv-1042.pdf', 'Your invoice', 'application/pdf'],
    );
  });

  it('a voice note as PTT in Ogg Opus, which takes no caption', async () => {
    const voice = samples.opus(2000);
    const message = await protoOf('voice', 'audio/ogg', voice, 'ignored');
    common(message.audioMessage, voice.length);
    assert.deepEqual([message.audioMessage!.ptt, message.audioMessage!.mimetype], [true, 'audio/ogg; codecs=opus']);
  });

  it('other audio as an audio file, not a voice note', async () => {
    const audio = samples.mp3(2000);
    const message = await protoOf('audio', 'audio/mpeg', audio, '');
    common(message.audioMessage, audio.length);
    assert.deepEqual([Boolean(message.audioMessage!.ptt), message.audioMessage!.mimetype], [false, 'audio/mpeg']);
  });

  it('a video with its caption', async () => {
    const video = samples.mp4(3000);
    const message = await protoOf('video', 'video/mp4', video, 'unboxing');
    common(message.videoMessage, video.length);
    assert.deepEqual([message.videoMessage!.caption, message.videoMessage!.mimetype], ['unboxing', 'video/mp4']);
  });

  it('a sticker as a sticker', async () => {
    const webp = samples.webp(800);
    const message = await protoOf('sticker', 'image/webp', webp, 'no caption on stickers');
    common(message.stickerMessage, webp.length);
    assert.equal(message.stickerMessage!.mimetype, 'image/webp');
    assert.equal(message.imageMessage, null, 'not an image');
  });
});
