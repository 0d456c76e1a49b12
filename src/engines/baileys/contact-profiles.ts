// A contact's profile as WhatsApp answers for it: a field it hides or has not set is none, and a
// picture is fetched from WhatsApp's CDN through the number's proxy.
import { Readable } from 'node:stream';
import { groupRefusal } from './group-admin.ts';
import type { ContactProfile } from '../engine.ts';
import type { Dispatcher } from 'undici';

/** A profile picture is a small image; a CDN that takes longer than this is not waited for. */
const PICTURE_DOWNLOAD_TIMEOUT_MS = 15_000;

/** WhatsApp's answer for a profile field the contact hides from us (401) or has not set (404): none. */
export function hiddenOrNone(error: unknown): undefined {
  const statusCode = (error as { output?: { statusCode?: number } }).output?.statusCode;
  if (statusCode === 401 || statusCode === 404) return undefined;
  throw groupRefusal(error);
}

/**
 * A profile picture on WhatsApp's CDN. Its URL's path names the picture (the query carries a
 * signature that changes on every answer), so it tells one picture from the next.
 */
export function pictureAt(url: string, dispatcher: Dispatcher | undefined): NonNullable<ContactProfile['picture']> {
  return {
    version: url.split('?')[0]!,
    download: async () => {
      // Through the number's proxy, as its other traffic to WhatsApp goes (ADR 0063).
      const response = await fetch(url, { signal: AbortSignal.timeout(PICTURE_DOWNLOAD_TIMEOUT_MS), ...(dispatcher && { dispatcher }) });
      if (!response.ok || response.body === null) throw new Error(`WhatsApp's CDN answered ${response.status} for a profile picture.`);
      return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>) as AsyncIterable<Buffer>;
    },
  };
}
