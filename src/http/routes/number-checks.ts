import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { notOwned, onNumberOwner, type OwnerAnswer } from './owner-calls.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import { parseCheckedPhones } from '../../messaging/number-checks.ts';
import { parsePhoneField } from '../message-input.ts';
import { apiKeyAuthHook, keyScope } from '../plugins/api-key-auth.ts';
import { errorResponses } from '../schemas.ts';

const bearer = [{ apiKey: [] }];

export interface CheckNumbersBody {
  from_phone: string;
  phones: string[];
}

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
          cached: { type: 'boolean', description: 'Answered from memory (a yes is kept a day, a no an hour) without asking WhatsApp, and not counted against the lookup limit.' },
        },
      },
    },
  },
} as const;

export type CheckAnswer = OwnerAnswer;

/** The check where from_phone's session runs: on this node, or forwarded to the node that serves it. */
export async function checkHere(gateway: Gateway, scope: AccountScope, body: CheckNumbersBody): Promise<CheckAnswer> {
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  const phones = parseCheckedPhones(body.phones);
  const number = await gateway.numbers.findNumber(scope, fromPhone).catch(notOwned);
  const results = await gateway.numberChecks.check(number, phones);
  return { statusCode: 200, body: { results: results.map((result) => ({ phone: result.phone, on_whatsapp: result.exists, wa_id: result.waId, cached: result.cached })) } };
}

/** POST /check_numbers and its /api alias. */
export function registerNumberCheckRoutes(app: FastifyInstance, gateway: Gateway): void {
  const onRequest = apiKeyAuthHook(gateway.authenticator);
  for (const [url, operationId] of [['/check_numbers', 'checkNumbers'], ['/api/check_numbers', 'checkNumbersApi']] as const) {
    app.post<{ Body: CheckNumbersBody }>(
      url,
      {
        onRequest,
        schema: {
          operationId,
          summary: 'Check whether phones use WhatsApp',
          description:
            'Asks, through from_phone\'s session, whether each phone uses WhatsApp. Answers are remembered per account (a yes for a day, a no for an hour) and shared with the account\'s send path; only phones not remembered are looked up, at most WAGW_NUMBER_CHECKS_PER_MINUTE a minute per number (60 by default), since heavy lookups get numbers banned. In the sandbox every phone uses WhatsApp. /check_numbers and /api/check_numbers are the same operation.',
          tags: ['numbers'],
          security: bearer,
          body: checkNumbersRequestSchema,
          response: { 200: checkNumbersResponseSchema, ...errorResponses(400, 401, 403, 429, 500, 503) },
        },
      },
      async (request, reply) => {
        const scope = keyScope(request);
        const answer = await routeCheck(gateway, scope, request.body);
        if (answer.retryAfter !== undefined) void reply.header('Retry-After', answer.retryAfter);
        return reply.status(answer.statusCode).send(answer.body);
      },
    );
  }
}

function routeCheck(gateway: Gateway, scope: AccountScope, body: CheckNumbersBody): Promise<CheckAnswer> {
  const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
  parseCheckedPhones(body.phones);
  return onNumberOwner(gateway, scope, fromPhone, () => checkHere(gateway, scope, body), '/internal/check_numbers', body);
}
