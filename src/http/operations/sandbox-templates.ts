import { presentTemplate } from '../../domain/templates.ts';
import { parsePhoneField } from '../message-input.ts';
import { SANDBOX_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';
import { templateSchema } from './templates.ts';

const placeholders = 'Numbered placeholders {{1}}, {{2}}, … without a gap, which a send fills in order.';

export const putSandboxTemplate = defineOperation(
  {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['phone', 'name', 'language', 'category', 'body'],
      properties: {
        phone: { type: 'string', description: 'One of your sandbox numbers (E.164).' },
        name: {
          type: 'string',
          pattern: '^[a-z0-9_]{1,512}$',
          description: "Lower-case letters, digits and underscores, as Meta's names.",
        },
        language: { type: 'string', pattern: '^[a-z]{2,3}(_[A-Z]{2})?$', examples: ['en_US'] },
        category: { type: 'string', enum: ['MARKETING', 'UTILITY', 'AUTHENTICATION'] },
        status: {
          type: 'string',
          enum: ['APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED'],
          // No schema default: the generated client would then require it.
          description:
            'Its rehearsed review status, APPROVED when not given; only an APPROVED one is sent (404 template_not_found otherwise), as on Meta.',
        },
        header: { type: 'string', minLength: 1, maxLength: 60, description: `A text header. ${placeholders}` },
        body: { type: 'string', minLength: 1, maxLength: 1024, description: placeholders },
        footer: { type: 'string', minLength: 1, maxLength: 60, description: 'A footer, without placeholders.' },
      },
    },
  },
  ['sandboxInbox'],
)({
  method: 'POST',
  scope: 'send',
  path: '/sandbox/templates',
  operationId: 'putSandboxTemplate',
  summary: 'Add or replace a rehearsal template of a sandbox number',
  description:
    "A sandbox number lists, reads and sends rehearsal message templates as a Cloud API number does its business's " +
    '(docs/cloud-api.md#rehearse-in-the-sandbox): order_ready and hello_world to begin with. This adds one, or replaces the one ' +
    'of the same name and language, so that a client rehearses its own templates. The node that runs the number keeps it while it ' +
    'runs, as the simulated network keeps its state; the answer is the template as GET /templates/{name} shows it.',
  tag: 'sandbox',
  answers: { 200: templateSchema },
  errors: SANDBOX_ERRORS,
  // On the number's owner, whose sends check against the catalogue.
  owner: ({ body }) => parsePhoneField(body.phone, 'phone'),
  handle: async ({ scope, body }, { sandboxInbox }) => {
    const { phone, ...described } = body;
    const template = await sandboxInbox.putTemplate(scope, parsePhoneField(phone, 'phone'), {
      ...described,
      status: described.status ?? 'APPROVED',
    });
    return ok(presentTemplate(template));
  },
});
