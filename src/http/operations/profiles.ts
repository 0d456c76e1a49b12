import { unknownNumberId } from './number-schema.ts';
import { AppError } from '../../domain/errors.ts';
import { PROFILE_ABOUT_MAX_LENGTH, PROFILE_NAME_MAX_LENGTH } from '../../domain/profiles.ts';
import type { ContactProfileView } from '../../messaging/profiles.ts';
import { parsePhoneField } from '../message-input.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { fromPhone } from './groups/group-number.ts';
import { defineSessionOperation, ok } from './operation.ts';
import type { OperationServices } from './services.ts';

// Profiles (ADR 0033): a contact's, read through from_phone's session, and our number's own, set
// through its session. Both run on the node that serves the number.

const businessSchema = {
  type: ['object', 'null'],
  description:
    "The contact's business profile; null for an ordinary account. WhatsApp's business query does not carry the business's name.",
  required: ['description', 'category', 'email', 'websites', 'address'],
  properties: {
    description: { type: ['string', 'null'] },
    category: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    websites: { type: 'array', items: { type: 'string' } },
    address: { type: ['string', 'null'] },
  },
} as const;

const pictureSchema = {
  type: ['object', 'null'],
  description: 'The profile picture, stored in your media store: null when the contact has none or hides it from your number.',
  required: ['media_id', 'url', 'mime_type', 'size', 'expires_at'],
  properties: {
    media_id: { type: 'string' },
    url: { type: 'string', description: 'GET /media/{id}, with a key of the account.' },
    mime_type: { type: 'string' },
    size: { type: 'integer' },
    expires_at: { type: ['string', 'null'], format: 'date-time', description: "When the stored copy may be removed, as an upload's." },
  },
} as const;

const contactProfileSchema = {
  type: 'object',
  required: ['phone', 'from_phone', 'about', 'about_set_at', 'picture', 'business', 'fetched_at'],
  properties: {
    phone: { type: 'string', description: 'The contact.' },
    from_phone: { type: 'string', description: 'Your number, whose view of the contact this is.' },
    about: { type: ['string', 'null'], description: "The contact's about text; null when it has none or hides it." },
    about_set_at: { type: ['string', 'null'], format: 'date-time' },
    picture: pictureSchema,
    business: businessSchema,
    fetched_at: {
      type: 'string',
      format: 'date-time',
      description: 'When WhatsApp was asked: the answer is kept for WAGW_PROFILE_CACHE_SECONDS.',
    },
  },
} as const;

function presentProfile(view: ContactProfileView, fromPhone: string, services: Pick<OperationServices, 'mediaLinks'>) {
  const { picture } = view;
  return {
    phone: view.phone,
    from_phone: fromPhone,
    about: view.about,
    about_set_at: view.aboutSetAt?.toISOString() ?? null,
    picture:
      picture === null
        ? null
        : {
            media_id: picture.id,
            url: services.mediaLinks.plain(picture.id),
            mime_type: picture.mimeType,
            size: picture.size,
            expires_at: picture.expiresAt?.toISOString() ?? null,
          },
    business: view.business,
    fetched_at: view.fetchedAt.toISOString(),
  };
}

export const getContactProfile = defineSessionOperation(
  {
    params: {
      type: 'object',
      required: ['phone'],
      properties: { phone: { type: 'string', description: 'The contact, E.164 (+ encoded as %2B or left as it is).' } },
    },
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone'],
      properties: {
        from_phone: { type: 'string', description: 'One of your numbers: the profile as the contact shows it to this number.' },
      },
    },
  },
  ['profiles', 'mediaLinks'],
)({
  method: 'GET',
  scope: 'read',
  path: '/contacts/:phone/profile',
  operationId: 'getContactProfile',
  summary: "Read a contact's profile picture, about text and business profile",
  description:
    'As the contact shows them to from_phone (a contact may hide them). The picture is stored in your media store, once per picture, and ' +
    'served by its media_id. The answer is kept for WAGW_PROFILE_CACHE_SECONDS (300) before WhatsApp is asked again.',
  tag: 'contacts',
  answers: { 200: contactProfileSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS, 'storage_quota_exceeded', 'insufficient_storage'],
  check: ({ params }) => void parsePhoneField(params.phone, 'phone'),
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ params, number }, services) => {
    const view = await services.profiles.contactProfile(number, parsePhoneField(params.phone, 'phone'));
    return ok(presentProfile(view, number.phone, services));
  },
});

export const updateOwnProfile = defineSessionOperation(
  {
    params: {
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'string', description: 'The number_id, or the phone in E.164.' } },
    },
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: PROFILE_NAME_MAX_LENGTH, description: 'The display name contacts see.' },
        about: { type: 'string', minLength: 1, maxLength: PROFILE_ABOUT_MAX_LENGTH, description: 'The about text.' },
        picture_media_id: { type: 'string', description: 'An image of your media store (POST /media) to show as the profile picture.' },
      },
    },
  },
  ['numbers', 'profiles', 'media'],
)({
  method: 'PATCH',
  scope: 'send',
  path: '/numbers/:id/profile',
  operationId: 'updateNumberProfile',
  summary: "Set a number's display name, about text and picture",
  description:
    "Sets those given, through the number's session, as its phone would; the others are left as they are. {id} is the number's phone or " +
    'its number_id.',
  tag: 'numbers',
  answers: {
    200: {
      type: 'object',
      required: ['number_id', 'phone', 'changed'],
      properties: {
        number_id: { type: 'string' },
        phone: { type: 'string' },
        changed: { type: 'array', items: { type: 'string', enum: ['name', 'about', 'picture'] } },
      },
    },
  },
  errors: [
    ...KEYED_ERRORS,
    ...REQUEST_ERRORS,
    'number_not_found',
    'number_not_connected',
    'rate_limited',
    'capability_not_supported',
    'media_not_found',
    'media_kind_mismatch',
  ],
  owner: ({ scope, params }, { numbers }) => numbers.findNumber(scope, params.id).catch(unknownNumberId),
  handle: async ({ body, number }, services) => {
    const pictureId = body.picture_media_id;
    const stored = pictureId === undefined ? undefined : await services.media.find(number.accountId, pictureId, 'picture_media_id');
    if (stored !== undefined && stored.kind !== 'image') {
      throw new AppError('media_kind_mismatch', `picture_media_id is ${stored.mimeType}; a profile picture is an image.`, {
        field: 'picture_media_id',
        kind: 'image',
        mime_type: stored.mimeType,
      });
    }
    const picture = stored === undefined ? undefined : await services.media.outgoing(stored);
    await services.profiles.updateOwnProfile(
      number,
      { ...(body.name !== undefined && { name: body.name }), ...(body.about !== undefined && { about: body.about }) },
      picture,
    );
    const changed = [
      ...(body.name !== undefined ? ['name'] : []),
      ...(body.about !== undefined ? ['about'] : []),
      ...(picture !== undefined ? ['picture'] : []),
    ];
    return ok({ number_id: number.id, phone: number.phone, changed });
  },
});
