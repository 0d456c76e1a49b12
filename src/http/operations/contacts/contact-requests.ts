import { ref } from '../../schema-refs.ts';
import { pageOffsetParameter } from '../../schemas.ts';
import { NUMBER_READ_ERRORS } from '../error-responses.ts';

/** What every contact read can answer: the key, the request, and from_phone not of the account. */
export const CONTACT_ERRORS = NUMBER_READ_ERRORS;

const fromPhone = { type: 'string', description: 'One of your numbers: its people.' } as const;

export const listContactsQuerySchema = {
  type: 'object',
  required: ['from_phone'],
  properties: {
    from_phone: fromPhone,
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 50,
      description: 'How many people a page holds: 1 to 100; 50 by default.',
    },
    cursor: { type: 'string', description: 'next_cursor of the previous page.' },
    offset: pageOffsetParameter,
  },
  additionalProperties: false,
} as const;

export const oneContactQuerySchema = {
  type: 'object',
  required: ['from_phone'],
  properties: { from_phone: fromPhone },
  additionalProperties: false,
} as const;

export const contactParamsSchema = {
  type: 'object',
  required: ['phone_or_lid'],
  properties: {
    phone_or_lid: {
      type: 'string',
      description: 'The person by phone (E.164, URL-encoded) or by LID ("<digits>@lid"): either finds them once the gateway knows both.',
    },
  },
} as const;

export const contactPageSchema = {
  type: 'object',
  required: ['contacts', 'next_cursor'],
  properties: {
    contacts: { type: 'array', items: ref('Person') },
    next_cursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last page.' },
  },
} as const;
