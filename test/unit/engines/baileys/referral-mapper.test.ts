import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proto } from 'baileys';
import { referralOf } from '../../../../src/engines/baileys/inbound-mapper.ts';

describe("an ad's externalAdReply as a referral", () => {
  it("a video ad: mediaUrl is the video, title the headline; Baileys' empty strings are null", () => {
    assert.deepEqual(
      referralOf({
        title: 'Watch this',
        body: '',
        mediaType: proto.ContextInfo.ExternalAdReplyInfo.MediaType.VIDEO,
        mediaUrl: 'https://video.example/ad.mp4',
        sourceType: 'ad',
        sourceId: '1202',
        ctwaClid: 'ARAk1',
      }),
      {
        sourceType: 'ad',
        sourceId: '1202',
        sourceUrl: null,
        headline: 'Watch this',
        body: null,
        mediaType: 'video',
        imageUrl: null,
        videoUrl: 'https://video.example/ad.mp4',
        thumbnailUrl: null,
        ctwaClid: 'ARAk1',
      },
    );
  });

  it('a rich link card that names no ad is no referral, and a long field is cut', () => {
    assert.equal(referralOf({ title: 'A link card', thumbnailUrl: 'https://example.com/t.jpg' }), undefined);
    assert.equal(referralOf({ sourceUrl: `https://fb.me/${'x'.repeat(5_000)}` })?.sourceUrl?.length, 2_048);
  });
});
