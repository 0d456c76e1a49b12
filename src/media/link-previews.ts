import { Parser } from 'htmlparser2';
import type { LinkPreview } from '../domain/structured-content.ts';
import type { MediaFetcher } from './media-fetcher.ts';
import type { PreviewBudgets, PreviewMeter, PreviewPayer } from './preview-budgets.ts';

/** The most of a page read for its preview: the head, where the tags are, comes first. */
const PREVIEW_PAGE_MAX_BYTES = 512 * 1024;
/** The largest image taken as a preview's thumbnail; the engine shrinks it to WhatsApp's small JPEG. */
const PREVIEW_IMAGE_MAX_BYTES = 2 * 1024 * 1024;
/** How long a preview may take in all, the page and its image together. */
const PREVIEW_TIMEOUT_MS = 5_000;
const TITLE_MAX = 300;
const DESCRIPTION_MAX = 1_000;

interface Wanted {
  maxBytes: number;
  type: RegExp;
  cutAtBudget: boolean;
}

/** What a page says of itself: Open Graph first, then the page's own title and description. */
export interface PageMeta {
  title: string;
  description: string | null;
  /** The absolute URL of its image, if it names one. */
  image: string | null;
}

/**
 * A link's preview, fetched through the media fetcher: the same SSRF guard, redirects and
 * time-outs as `media.url`, within a size and time budget of its own. A preview is a courtesy:
 * a page that cannot be had, or says nothing of itself, gives none (undefined), and the text is
 * sent without it.
 */
export class LinkPreviewFetcher {
  constructor(
    private readonly fetcher: Pick<MediaFetcher, 'fetch'>,
    private readonly budgets: Pick<PreviewBudgets, 'start'>,
    private readonly timeoutMs = PREVIEW_TIMEOUT_MS,
  ) {}

  /**
   * The preview of `url`, paid for by `payer` (preview-budgets.ts): a 429 before anything is
   * fetched when its budgets are spent; every fetch and every byte after that is counted.
   */
  async preview(url: string, payer: PreviewPayer): Promise<{ preview: LinkPreview; thumbnail?: Buffer } | undefined> {
    const meter = await this.budgets.start(payer);
    const deadline = Date.now() + this.timeoutMs;
    const page = await this.read(
      url,
      { maxBytes: PREVIEW_PAGE_MAX_BYTES, type: /^text\/html|^application\/xhtml/i, cutAtBudget: true },
      deadline,
      meter,
    );
    if (page === undefined) return undefined;
    const meta = parsePageMeta(page.toString('utf8'), url);
    if (meta === undefined) return undefined;
    const thumbnail =
      meta.image === null || !meter.mayFetch()
        ? undefined
        : await this.read(meta.image, { maxBytes: PREVIEW_IMAGE_MAX_BYTES, type: /^image\//i, cutAtBudget: false }, deadline, meter);
    return { preview: { url, title: meta.title, description: meta.description }, ...(thumbnail !== undefined && { thumbnail }) };
  }

  /**
   * Up to `maxBytes` of a URL of the expected type, before the deadline; undefined on any
   * failure. A page is cut where the budget ends (its head is what matters); a file over it is
   * refused, as half an image is none.
   */
  private async read(url: string, want: Wanted, deadline: number, meter: PreviewMeter): Promise<Buffer | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
    });
    try {
      return await Promise.race([this.readWithin(url, want, deadline, meter), late]);
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private async readWithin(
    url: string,
    { maxBytes, type, cutAtBudget }: Wanted,
    deadline: number,
    meter: PreviewMeter,
  ): Promise<Buffer | undefined> {
    const fetched = await this.fetcher.fetch(url);
    if (fetched.contentType !== undefined && !type.test(fetched.contentType)) {
      // Leaving the loop ends the response (media-fetcher's guard destroys it).
      for await (const _chunk of fetched.bytes) break;
      return undefined;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of fetched.bytes) {
      // Bytes read were moved, used or not: a spent budget ends the read (and the preview) here.
      meter.bytes(chunk.length);
      chunks.push(chunk);
      size += chunk.length;
      if (size > maxBytes || Date.now() > deadline) break;
    }
    if (size > maxBytes && !cutAtBudget) return undefined;
    return Buffer.concat(chunks).subarray(0, maxBytes);
  }
}

/**
 * The preview tags of an HTML page, read by a real HTML parser (entities, attribute quoting and
 * comments are the parser's business, not a pattern's): og:title, og:description and og:image,
 * with <title> and the description meta as fallbacks. Undefined when the page has no title.
 */
export function parsePageMeta(html: string, pageUrl: string): PageMeta | undefined {
  const found: Record<string, string> = {};
  let inTitle = false;
  let pageTitle = '';
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'title') inTitle = true;
        if (name !== 'meta') return;
        const key = (attributes.property ?? attributes.name ?? '').toLowerCase();
        const content = attributes.content;
        if (
          content !== undefined &&
          [
            'og:title',
            'og:description',
            'og:image',
            'og:image:url',
            'og:image:secure_url',
            'description',
            'twitter:title',
            'twitter:description',
            'twitter:image',
          ].includes(key)
        )
          found[key] ??= content;
      },
      ontext(text) {
        if (inTitle) pageTitle += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        // The tags live in the head; the body need not be parsed.
        if (name === 'head') parser.pause();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  const title = clean(found['og:title'] ?? found['twitter:title'] ?? pageTitle, TITLE_MAX);
  if (title === '') return undefined;
  const description = clean(found['og:description'] ?? found['twitter:description'] ?? found.description ?? '', DESCRIPTION_MAX);
  return {
    title,
    description: description === '' ? null : description,
    image: absoluteImage(found['og:image:secure_url'] ?? found['og:image'] ?? found['og:image:url'] ?? found['twitter:image'], pageUrl),
  };
}

function clean(text: string, max: number): string {
  return [...text.replace(/\s+/g, ' ').trim()].slice(0, max).join('');
}

function absoluteImage(raw: string | undefined, pageUrl: string): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  try {
    const url = new URL(raw.trim(), pageUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}
