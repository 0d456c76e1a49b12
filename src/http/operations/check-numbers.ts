import { parseCheckedPhones } from '../../messaging/number-checks.ts';
import { parsePhoneField } from '../message-input.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { defineSessionOperation, ok } from './operation.ts';
import type { E164 } from '../../domain/phone.ts';

const checkNumbersRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'phones'],
  properties: {
    from_phone: { type: 'string', description: 'One of your numbers, which asks WhatsApp.' },
    phones: { type: 'array', items: { type: 'string' }, description: '1 to 50 phones, in any common spelling with their country code.' },
  },
} as const;

const checkNumbersResponseSchema = {
  type: 'object',
  required: ['results'],
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['phone', 'on_whatsapp', 'wa_id', 'cached'],
        properties: {
          phone: { type: 'string', description: 'E.164, in the order asked.' },
          on_whatsapp: { type: 'boolean' },
          wa_id: { type: ['string', 'null'], description: 'Its WhatsApp id ("<digits>@s.whatsapp.net") when it uses WhatsApp.' },
          cached: {
            type: 'boolean',
            description:
              'Answered from memory (a yes is kept a day, a no an hour) without asking WhatsApp, and not counted against the lookup limit.',
          },
        },
      },
    },
  },
} as const;

export const checkNumbers = defineSessionOperation({ body: checkNumbersRequestSchema }, ['numberChecks']).reading<CheckCommand>()({
  method: 'POST',
  scope: 'send',
  path: '/check_numbers',
  operationId: 'checkNumbers',
  summary: 'Check whether phones use WhatsApp',
  description:
    "Asks, through from_phone's session, whether each phone uses WhatsApp. Answers are remembered per account (a yes for a day, a no for " +
    "an hour) and shared with the account's send path; only phones not remembered are looked up, at most " +
    'WAGW_NUMBER_CHECKS_PER_MINUTE a minute per number (60 by default), since heavy lookups get numbers banned. In the sandbox every ' +
    'phone uses WhatsApp. /check_numbers and /api/check_numbers are the same operation.',
  tag: 'numbers',
  answers: { 200: checkNumbersResponseSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  // Read once, in the order the fields are refused in.
  command: ({ body }) => ({ fromPhone: parsePhoneField(body.from_phone, 'from_phone'), phones: parseCheckedPhones(body.phones) }),
  owner: ({ command }) => command.fromPhone,
  handle: async ({ command: { phones }, number }, { numberChecks }) => {
    const results = await numberChecks.check(number, phones);
    return ok({
      results: results.map((result) => ({ phone: result.phone, on_whatsapp: result.exists, wa_id: result.waId, cached: result.cached })),
    });
  },
});

/** The request as read, once. */
interface CheckCommand {
  fromPhone: E164;
  phones: E164[];
}
