import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { AppError } from '../../domain/errors.ts';
import { assertMediaType, isMediaKind, mediaKinds, type MediaObject } from '../../domain/media.ts';
import { apiKeyAuthHook, documentedScope, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponseOf, errorResponses } from '../schemas.ts';
import { ref } from '../schema-refs.ts';
import { documentUploadBody, mediaDownloadHeadersSchema, UPLOAD_CONTENT_TYPES } from '../media-schemas.ts';
import { unsupportedContentCoding } from '../plugins/json-body.ts';
import { namedScope } from '../../web/named-scope.ts';
import { refuseGetBody } from '../operations/registry.ts';
import { serveMedia } from '../../web/serve-media.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'authenticator' | 'config' | 'media' | 'mediaLinks'>;

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
export async function registerMediaRoutes(app: FastifyInstance, gateway: Services): Promise<void> {
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
          return serveMedia(gateway.media, request, reply, await gateway.media.findBySignedLink(id));
        }
        return serveMedia(gateway.media, request, reply, await gateway.media.find(keyScope(request).accountId, id, 'id'));
      },
    );
  }
}
