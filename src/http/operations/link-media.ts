import { MAX_LINK_LIFETIME_MS } from '../../media/media-links.ts';
import { KEYED_ERRORS, REQUEST_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';

export const linkMedia = defineOperation(
  {
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The media_id.' } } },
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        expires_in_seconds: { type: 'integer', minimum: 1, maximum: MAX_LINK_LIFETIME_MS / 1000, description: 'How long the link works.' },
      },
    },
  },
  ['media', 'mediaLinks', 'mediaLinkTtlMs'],
)({
  method: 'POST',
  scope: 'send',
  path: '/media/:id/link',
  operationId: 'linkMedia',
  summary: 'Make a signed download link',
  description:
    'A link to the file that needs no API key, for handing to another system, valid for expires_in_seconds (default ' +
    "WAGW_MEDIA_LINK_TTL_HOURS, at most 7 days) or until the file's retention ends. /media/{id}/link and /api/media/{id}/link are the " +
    'same operation.',
  tag: 'media',
  answers: {
    200: {
      type: 'object',
      required: ['url', 'expires_at'],
      properties: { url: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } },
    },
  },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, 'media_not_found'],
  handle: async ({ scope, params, body }, { media, mediaLinks, mediaLinkTtlMs }) => {
    const file = await media.find(scope.accountId, params.id, 'id');
    // The body is optional: a POST without one takes the default lifetime.
    const seconds = body?.expires_in_seconds;
    const until = Math.min(Date.now() + (seconds === undefined ? mediaLinkTtlMs : seconds * 1000), file.expiresAt!.getTime());
    const link = mediaLinks.sign(file.id, new Date(until));
    return ok({ url: link.url, expires_at: link.expiresAt.toISOString() });
  },
});
