/**
 * Where a message came from when a person wrote after tapping an ad or a post (Click-to-WhatsApp):
 * the ad's attribution, as WhatsApp's `externalAdReply` gives it. Its JSON form is the Cloud API's
 * `referral` object, field for field, so that one integration reads both (ADR 0051).
 */
export interface AdReferral {
  /** `ad` or `post`, as WhatsApp names the source; null when it did not say. */
  sourceType: string | null;
  sourceId: string | null;
  sourceUrl: string | null;
  headline: string | null;
  body: string | null;
  mediaType: 'image' | 'video' | null;
  imageUrl: string | null;
  videoUrl: string | null;
  thumbnailUrl: string | null;
  /** The click's id, which Meta's Conversions API takes to tie the lead to the ad. */
  ctwaClid: string | null;
}

/** The longest value of one field kept: attribution is a few short strings and URLs. */
const MAX_FIELD_LENGTH = 2_048;

/** A referral from untrusted parts: strings cut to a bound, anything else null; undefined when nothing names the ad. */
export function adReferral(parts: { [K in keyof AdReferral]?: unknown }): AdReferral | undefined {
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value.slice(0, MAX_FIELD_LENGTH) : null);
  const referral: AdReferral = {
    sourceType: text(parts.sourceType),
    sourceId: text(parts.sourceId),
    sourceUrl: text(parts.sourceUrl),
    headline: text(parts.headline),
    body: text(parts.body),
    mediaType: parts.mediaType === 'image' || parts.mediaType === 'video' ? parts.mediaType : null,
    imageUrl: text(parts.imageUrl),
    videoUrl: text(parts.videoUrl),
    thumbnailUrl: text(parts.thumbnailUrl),
    ctwaClid: text(parts.ctwaClid),
  };
  // A rich link card uses the same structure; only one that names a source or a click is an ad's.
  const namesTheAd =
    referral.sourceId !== null || referral.sourceUrl !== null || referral.ctwaClid !== null || referral.sourceType !== null;
  return namesTheAd ? referral : undefined;
}

/** The referral as webhooks and the API show it: the Cloud API's field names. */
export function presentReferral(referral: AdReferral) {
  return {
    source_type: referral.sourceType,
    source_id: referral.sourceId,
    source_url: referral.sourceUrl,
    headline: referral.headline,
    body: referral.body,
    media_type: referral.mediaType,
    image_url: referral.imageUrl,
    video_url: referral.videoUrl,
    thumbnail_url: referral.thumbnailUrl,
    ctwa_clid: referral.ctwaClid,
  };
}

/** The request's snake_case referral (the sandbox's simulated ad) in the gateway's terms. */
export function referralFromJson(value: Record<string, unknown>): AdReferral | undefined {
  return adReferral({
    sourceType: value.source_type,
    sourceId: value.source_id,
    sourceUrl: value.source_url,
    headline: value.headline,
    body: value.body,
    mediaType: value.media_type,
    imageUrl: value.image_url,
    videoUrl: value.video_url,
    thumbnailUrl: value.thumbnail_url,
    ctwaClid: value.ctwa_clid,
  });
}
