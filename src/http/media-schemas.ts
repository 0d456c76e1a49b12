import type { SwaggerTransform } from '@fastify/swagger';
import { mediaKinds } from '../domain/media.ts';

/** A stored file as POST /media answers it: the `Media` component. */
export const mediaComponent = {
  $id: 'Media',
  type: 'object',
  required: ['media_id', 'kind', 'mime_type', 'size', 'sha256', 'filename', 'expires_at'],
  properties: {
    media_id: { type: 'string', examples: ['med_01jd0k6x9g8p1b6m3v7t2q4w5e'] },
    kind: {
      type: 'string',
      enum: mediaKinds,
      description: 'How WhatsApp shows it, decided from the bytes unless the request named a kind they allow.',
    },
    mime_type: { type: 'string', description: 'The type the bytes show (or the declared one, for bytes with no signature).' },
    size: { type: 'integer', description: 'Bytes.' },
    sha256: { type: 'string', description: 'Hex SHA-256 of the bytes.' },
    filename: { type: ['string', 'null'] },
    expires_at: {
      type: 'string',
      format: 'date-time',
      description: 'When the bytes may be removed if no message uses them; a message that does keeps them for the media retention.',
    },
  },
} as const;

/** The content types an upload is declared with in the document: any, the file's own type. */
export const UPLOAD_CONTENT_TYPES = ['application/octet-stream', '*/*'] as const;

/**
 * The upload's body in the document. An upload's body is a stream that no JSON schema may
 * validate, so it is described only here, by the route's own swagger transform.
 */
export const documentUploadBody: SwaggerTransform = ({ schema, url }) => ({
  url,
  schema: {
    ...schema,
    body: {
      type: 'string',
      format: 'binary',
      description: "The file's bytes, sent with its Content-Type (or application/octet-stream to let the bytes tell).",
    },
  },
});

/** The conditional and partial requests a download understands. */
export const mediaDownloadHeadersSchema = {
  type: 'object',
  properties: {
    range: {
      type: 'string',
      description:
        'One byte range, `bytes=a-b`, `bytes=a-` or `bytes=-n`: answered 206 with Content-Range, or 416. Several ranges or another unit ' +
        'get the whole file.',
      examples: ['bytes=0-1023'],
    },
    'if-none-match': { type: 'string', description: 'The ETag (the quoted SHA-256) you hold: answered 304 while the file is the same.' },
    'if-range': {
      type: 'string',
      description: 'With Range: the ETag you hold; the range is served only while the file is the same, the whole file otherwise.',
    },
  },
} as const;
