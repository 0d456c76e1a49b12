import { AppError } from '../../domain/errors.ts';
import { presentTemplate } from '../../domain/templates.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { fromPhone } from './groups/group-number.ts';
import { defineSessionOperation, ok } from './operation.ts';

// The message templates of a Cloud API number's business account (docs/cloud-api.md#templates),
// read from Meta through the number's session: listed, and one read by name and language. A
// template is sent with POST /send_message and a `template` object (ADR 0071).

export const templateSchema = {
  type: 'object',
  required: ['name', 'language', 'status', 'category', 'header_parameters', 'body_parameters', 'header_media', 'components'],
  properties: {
    name: { type: 'string' },
    language: { type: 'string', examples: ['en_US'] },
    status: { type: 'string', description: "Meta's review status: APPROVED (the only one sent), PENDING, REJECTED, PAUSED or DISABLED." },
    category: { type: ['string', 'null'], description: 'MARKETING, UTILITY or AUTHENTICATION.' },
    header_parameters: { type: 'integer', description: "How many header_parameters a send gives (its text header's placeholders)." },
    body_parameters: { type: 'integer', description: 'How many body_parameters a send gives.' },
    header_media: {
      type: ['string', 'null'],
      enum: ['image', 'video', 'document', null],
      description: 'The kind of file a send gives as header_media, when the header is one; null for a text header or none.',
    },
    components: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'format', 'text', 'buttons'],
        properties: {
          type: { type: 'string' },
          format: { type: ['string', 'null'] },
          text: { type: ['string', 'null'] },
          buttons: {
            type: 'array',
            description:
              "A BUTTONS component's buttons in order (a send's button_parameters name them by index); empty for the other components.",
            items: {
              type: 'object',
              required: ['type', 'text', 'url'],
              properties: {
                type: { type: 'string', description: 'QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE, …, as Meta names them.' },
                text: { type: ['string', 'null'] },
                url: { type: ['string', 'null'], description: "A URL button's address; one ending in {{1}} takes its suffix from a send." },
              },
            },
          },
        },
      },
    },
  },
} as const;

const fromPhoneProperty = { type: 'string', description: 'One of your Cloud API numbers: its business account’s templates.' } as const;

export const listTemplates = defineSessionOperation(
  { query: { type: 'object', additionalProperties: false, required: ['from_phone'], properties: { from_phone: fromPhoneProperty } } },
  [],
)({
  method: 'GET',
  scope: 'read',
  path: '/templates',
  operationId: 'listTemplates',
  summary: "List the message templates of a Cloud API number's business account",
  description:
    'Every template of the business account, with its review status and how many parameters each part takes, as Meta lists them now. ' +
    'Another engine answers 422 capability_not_supported.',
  tag: 'messages',
  answers: {
    200: {
      type: 'object',
      required: ['from_phone', 'templates'],
      properties: { from_phone: { type: 'string' }, templates: { type: 'array', items: templateSchema } },
    },
  },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ number, session }) => ok({ from_phone: number.phone, templates: (await session.listTemplates()).map(presentTemplate) }),
});

export const getTemplate = defineSessionOperation(
  {
    params: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 512 } } },
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone', 'language'],
      properties: { from_phone: fromPhoneProperty, language: { type: 'string', maxLength: 15, examples: ['en_US'] } },
    },
  },
  [],
)({
  method: 'GET',
  scope: 'read',
  path: '/templates/:name',
  operationId: 'getTemplate',
  summary: 'Read one message template',
  description: 'One template of the business account by name and language, whatever its status; 404 template_not_found when there is none.',
  tag: 'messages',
  answers: { 200: templateSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS, 'template_not_found'],
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ params, query, session }) => {
    const found = (await session.listTemplates()).find((template) => template.name === params.name && template.language === query.language);
    if (found === undefined)
      throw new AppError('template_not_found', `There is no template ${params.name} in ${query.language}.`, { field: 'name' });
    return ok(presentTemplate(found));
  },
});
