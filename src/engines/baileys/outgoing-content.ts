// A send's message as Baileys builds it from the port's request: a text with its link preview and
// thumbnail, a file, or a place, cards or a poll (with the poll's secret made here).
import type { OutgoingMessage } from '../engine.ts';
import { toMediaContent, toTextContent, toStructuredContent } from './outbound-mapper.ts';
import { randomBytes } from 'node:crypto';
import { extractImageThumb } from 'baileys';
import type { AnyMessageContent } from 'baileys';
import { capabilityDeclined } from '../capability-declined.ts';

/**
 * The message as Baileys builds it: a text (with its link preview), a file (view-once or not),
 * or a place, cards or a poll. A poll's secret is made here, so that the gateway keeps it to
 * open the votes, whatever Baileys' own cache has forgotten.
 */
export async function contentOf(request: OutgoingMessage): Promise<{ content: AnyMessageContent; pollSecret?: Buffer }> {
  const { media, structured } = request;
  if (media !== undefined)
    return {
      content: toMediaContent(
        { ...media, bytes: { stream: await media.open() } },
        request.text,
        structured !== undefined && 'viewOnce' in structured,
      ),
    };
  if (structured === undefined || 'viewOnce' in structured) return { content: toTextContent(request.text) };
  if ('linkPreview' in structured)
    return { content: toTextContent(request.text, structured.linkPreview, await smallThumbnail(request.linkPreviewThumbnail)) };
  if ('template' in structured || 'interactive' in structured) throw capabilityDeclined('baileys', 'send_template', 'send it');
  const pollSecret = 'poll' in structured ? randomBytes(32) : undefined;
  return {
    content: toStructuredContent(structured, request.text, pollSecret ?? new Uint8Array()),
    ...(pollSecret !== undefined && { pollSecret }),
  };
}

/**
 * A preview's image as the small JPEG WhatsApp shows beside a link, made by Baileys' own
 * thumbnailer; without an image library it cannot be made, and the preview goes without.
 */
async function smallThumbnail(image: Buffer | undefined): Promise<Buffer | undefined> {
  if (image === undefined) return undefined;
  try {
    return (await extractImageThumb(image, PREVIEW_THUMBNAIL_WIDTH)).buffer as Buffer;
  } catch {
    return undefined;
  }
}

/** The width of a link preview's thumbnail, as WhatsApp's apps make it. */
const PREVIEW_THUMBNAIL_WIDTH = 192;
