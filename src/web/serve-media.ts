import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';
import { GENERIC_BINARY, isMediaType, type MediaObject } from '../domain/media.ts';
import type { ByteRange } from '../media/blob-store.ts';

/** What serving a file needs of the media service: its bytes, whole or a range. */
export interface MediaFiles {
  open(media: MediaObject, range?: ByteRange): Promise<Readable>;
}

/** Answers a media object's bytes, whole or a range, with its headers; the caller has checked who may see it. */
export async function serveMedia(
  files: MediaFiles,
  request: FastifyRequest,
  reply: FastifyReply,
  media: MediaObject,
): Promise<FastifyReply> {
  const etag = `"${media.sha256}"`;
  void reply
    .header('etag', etag)
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'private, max-age=3600')
    // A type stored before types were checked may not be a valid header; the bytes still are the file.
    .header('content-type', isMediaType(media.mimeType) ? media.mimeType : GENERIC_BINARY)
    .header('content-disposition', contentDisposition(media))
    // The bytes are the sender's: never let a browser run them as a page of this origin.
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('x-content-type-options', 'nosniff');
  if (matchesEtag(request.headers['if-none-match'], etag)) return reply.status(304).send();
  const ifRange = request.headers['if-range'];
  const range = ifRange === undefined || ifRange === etag ? parseRange(request.headers.range, media.size) : undefined;
  if (range === 'unsatisfiable') {
    void reply.header('content-range', `bytes */${media.size}`);
    throw new AppError('range_not_satisfiable', `The range is outside the file, which has ${media.size} bytes.`, { size: media.size });
  }
  const stream = await files.open(media, range);
  if (range === undefined) return reply.header('content-length', media.size).send(stream);
  return reply
    .status(206)
    .header('content-range', `bytes ${range.start}-${range.end}/${media.size}`)
    .header('content-length', range.end - range.start + 1)
    .send(stream);
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/**
 * One range of `bytes=a-b`, `bytes=a-` or `bytes=-n`. Anything else (several ranges, another
 * unit, nonsense) is ignored and the whole file is served, as HTTP allows.
 */
function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/** Inline for pictures, sound and video, a download otherwise; the name as ASCII and, exactly, as UTF-8. */
function contentDisposition(media: MediaObject): string {
  const disposition = media.kind === 'document' ? 'attachment' : 'inline';
  const name = media.fileName ?? `${media.id}`;
  const ascii = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  return (
    `${disposition}; filename="${ascii}"; ` +
    `filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`
  );
}
