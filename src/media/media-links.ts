import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';

/** The longest a signed link may live, whatever is asked: a week. */
export const MAX_LINK_LIFETIME_MS = 7 * 86_400_000;

export interface MediaLink {
  url: string;
  expiresAt: Date;
}

/**
 * Download links that need no API key: `/media/{id}?expires=<unix seconds>&signature=<hex>`,
 * an HMAC-SHA256 of the id and the expiry under a key derived from the secret key. A receiver
 * can hand one to another system; it opens that one file until it expires, and nothing else.
 * The check is in constant time, and an expired or altered link is no different from no link.
 */
export class MediaLinks {
  /** Made once: an HMAC keyed with a Buffer costs far more on Node 24 (webhooks/signing.ts). */
  private readonly keyObject: KeyObject;

  constructor(
    key: Buffer,
    /** WAGW_PUBLIC_URL without a trailing slash, or '' for links relative to the gateway. */
    private readonly publicUrl: string,
  ) {
    this.keyObject = createSecretKey(key);
  }

  static deriveKey(secretKey: Buffer): Buffer {
    return createHmac('sha256', secretKey).update('wa-gateway media links').digest();
  }

  /** Where a key of the account downloads the file. */
  plain(mediaId: string): string {
    return `${this.publicUrl}/media/${mediaId}`;
  }

  sign(mediaId: string, expiresAt: Date): MediaLink {
    const expires = Math.floor(expiresAt.getTime() / 1000);
    return {
      url: `${this.plain(mediaId)}?expires=${expires}&signature=${this.signature(mediaId, expires).toString('hex')}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  verify(mediaId: string, expires: string | undefined, signature: string | undefined, now = new Date()): boolean {
    if (expires === undefined || signature === undefined || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
    if (Number(expires) * 1000 <= now.getTime()) return false;
    return timingSafeEqual(this.signature(mediaId, Number(expires)), Buffer.from(signature, 'hex'));
  }

  private signature(mediaId: string, expires: number): Buffer {
    return createHmac('sha256', this.keyObject).update(`${mediaId}\n${expires}`).digest();
  }
}
