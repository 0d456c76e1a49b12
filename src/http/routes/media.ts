import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Gateway } from '../../main.ts';
import { AppError } from '../../domain/errors.ts';
import { assertMediaType, GENERIC_BINARY, isMediaKind, isMediaType, mediaKinds, type MediaObject } from '../../domain/media.ts';
import type { ByteRange } from '../../media/blob-store.ts';
import { apiKeyAuthHook, documentedScope, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponseOf, errorResponses, ref } from '../schemas.ts';
import { documentUploadBody, mediaDownloadHeadersSchema, UPLOAD_CONTENT_TYPES } from '../media-schemas.ts';
import { unsupportedContentCoding } from '../plugins/json-body.ts';
import { namedScope } from '../plugins/named-scope.ts';
import { refuseGetBody } from '../operations/registry.ts';

export const MEDIA_UPLOAD_PATHS: readonly string[] = ['/media', '/api/media'];

const mediaObjectSchema = ref('Media');

function presentMedia(media: MediaObject) {
  return {
    media_id: media.id,
    kind: media.kind,
    mime_type: media.mimeType,
    size: media.size,
    sha256: media.sha256,
    filename: media.fileName,
    expires_at: media.expiresAt!.toISOString(),
  };
}

interface DownloadQuery {
  expires?: string;
  signature?: string;
}

interface UploadQuery {
  kind?: string;
  filename?: string;
}

/**
 * POST /media (upload, streamed) and GET /media/{id} (download, with ranges), at both paths. They
 * are not yet declared operations (src/http/operations/): the upload's body is the file as a
 * stream, and a download is answered to a key or a signed link, with Range and ETag headers; the
 * registry has neither a stream body nor that authentication (docs/adr/0027).
 */
export async function registerMediaRoutes(app: FastifyInstance, gateway: Gateway): Promise<void> {
  const uploadAuth = apiKeyAuthHook(gateway.authenticator, 'send', 'POST /media');
  const downloadAuth = apiKeyAuthHook(gateway.authenticator, 'read', 'GET /media/:id');
  const largestFile = Math.max(...Object.values(gateway.config.media.limits));

  // In a scope of their own: here a body of any type is the file, handed on as a stream.
  await app.register(
    namedScope('media uploads', async (uploads) => {
      uploads.removeAllContentTypeParsers();
      uploads.addContentTypeParser('*', (request, payload, done) => {
        // Compressed bytes would be stored, sniffed and sent compressed: refused, as for JSON.
        const coding = unsupportedContentCoding(request.headers['content-encoding']);
        if (coding !== undefined)
          done(
            new AppError('invalid_request', `The file must not be compressed in transit: Content-Encoding ${coding} is not supported.`, {
              field: 'Content-Encoding',
            }),
            undefined,
          );
        else done(null, payload);
      });
      for (const [url, operationId] of [
        ['/media', 'uploadMedia'],
        ['/api/media', 'uploadMediaApi'],
      ] as const) {
        uploads.post<{ Querystring: UploadQuery }>(
          url,
          {
            onRequest: uploadAuth,
            bodyLimit: largestFile,
            config: { swaggerTransform: documentUploadBody },
            schema: {
              operationId,
              summary: 'Upload a file to send later',
              description:
                'The body is the file itself, sent with its Content-Type; it is streamed to storage, never held whole. The type and kind ' +
                'come from the bytes: a Content-Type they contradict is refused. Send it by passing the returned media_id as media.id. ' +
                'An upload no message uses expires after WAGW_MEDIA_UPLOAD_TTL_HOURS (24 by default). Uploads count against the ' +
                "account's media storage quota (413 storage_quota_exceeded) and upload rate (429 upload_rate_exceeded), by plan; while " +
                "the gateway's disk is near full they are refused with 503 insufficient_storage. /media and /api/media are the same " +
                'operation.',
              tags: ['media'],
              ...documentedScope('send'),
              consumes: UPLOAD_CONTENT_TYPES,
              querystring: {
                type: 'object',
                additionalProperties: false,
                properties: {
                  kind: {
                    type: 'string',
                    enum: mediaKinds,
                    description: 'Send it as this kind rather than the one its type suggests (a WebP as an image, say).',
                  },
                  filename: { type: 'string', maxLength: 255, description: 'The name a recipient sees, for a document.' },
                },
              },
              response: {
                201: mediaObjectSchema,
                ...errorResponses(400, 401, 413, 429, 500, 503),
                403: errorResponseOf(['missing_scope']),
              },
            },
          },
          async (request, reply) => {
            const { kind, filename } = request.query;
            const contentType = request.headers['content-type'];
            if (contentType !== undefined) assertMediaType(contentType, 'Content-Type');
            const declaredLength = Number(request.headers['content-length']);
            // Without a Content-Type, an empty body reaches no parser and arrives as no body at all.
            const bytes = (request.body ?? Readable.from([])) as AsyncIterable<Buffer>;
            const media = await gateway.media.ingest(bytes, {
              accountId: keyScope(request).accountId,
              source: 'upload',
              // A stated length lets the quota, the upload rate and the disk refuse before any byte is read.
              declaredBytes: Number.isSafeInteger(declaredLength) && declaredLength > 0 ? declaredLength : undefined,
              kind: kind !== undefined && isMediaKind(kind) ? kind : undefined,
              // A generic type says nothing about the file, so it is no claim to check.
              mimeType: contentType === undefined || /^application\/octet-stream\b/i.test(contentType) ? undefined : contentType,
              fileName: filename,
            });
            return reply.status(201).send(presentMedia(media));
          },
        );
      }
    }),
  );

  // A signed link opens its one file without a key; without a signature, a key is required.
  const keyOrSignature = async (request: FastifyRequest<{ Querystring: DownloadQuery }>) => {
    if (request.query.signature === undefined && request.query.expires === undefined) await downloadAuth(request);
  };
  for (const [url, operationId] of [
    ['/media/:id', 'downloadMedia'],
    ['/api/media/:id', 'downloadMediaApi'],
  ] as const) {
    app.get<{ Params: { id: string }; Querystring: DownloadQuery }>(
      url,
      {
        onRequest: keyOrSignature,
        preValidation: refuseGetBody,
        // A signed link is a bearer secret for up to 7 days: its signature never reaches the log.
        config: { secretQueryParameters: ['signature'] },
        schema: {
          operationId,
          summary: 'Download a media file',
          description:
            'The bytes of an upload, a sent file or a received one, to a key of the account that owns it (any other gets 404), or to ' +
            'anyone with a signed link (expires and signature, from a webhook or POST /media/{id}/link). Supports Range (one range) ' +
            'and If-None-Match with the strong ETag, which is the SHA-256. /media/{id} and /api/media/{id} are the same operation.',
          tags: ['media'],
          ...documentedScope('read'),
          params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The media_id.' } } },
          headers: mediaDownloadHeadersSchema,
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: {
              expires: { type: 'string', description: "A signed link's expiry, in Unix seconds." },
              signature: { type: 'string', description: "A signed link's signature; with it, no key is needed." },
            },
          },
          response: {
            200: {
              description: 'The whole file, with its type as Content-Type.',
              content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
            },
            206: {
              description: 'The requested range, with Content-Range.',
              content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
            },
            304: { description: 'If-None-Match named the current ETag: nothing changed.', type: 'null' },
            // 400: a URL with a broken %-escape, an unknown query parameter or a body.
            ...errorResponses(400, 401, 404, 416, 500),
            403: errorResponseOf(['missing_scope']),
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const { expires, signature } = request.query;
        if (request.apiKey === null) {
          // An expired, altered or foreign link is no different from an unknown file.
          if (!gateway.mediaLinks.verify(id, expires, signature))
            throw new AppError('media_not_found', 'This link is unknown, altered or expired.', { field: 'signature' });
          return serveMedia(gateway, request, reply, await gateway.media.findBySignedLink(id));
        }
        return serveMedia(gateway, request, reply, await gateway.media.find(keyScope(request).accountId, id, 'id'));
      },
    );
  }
}

/** Answers a media object's bytes, whole or a range, with its headers; the caller has checked who may see it. */
export async function serveMedia(
  gateway: Gateway,
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
  const stream = await gateway.media.open(media, range);
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
