import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import { assertSendableText } from '../../domain/message-text.ts';
import type { Message, WhatsAppNumber } from '../../domain/model.ts';
import { parseE164 } from '../../domain/phone.ts';
import type { Gateway } from '../../main.ts';
import { accountOf, pageContext, requireAccountMember, sendPage } from '../context.ts';
import { attempt, formErrorText, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentNumbers, presentNumberStatuses } from '../presenters/numbers.ts';
import { NumbersPage } from '../views/numbers-page.tsx';

/** `/numbers`: the account's numbers, their live status, and the sandbox's incoming-message form. */
export function registerNumbersRoutes(app: FastifyInstance, gateway: Gateway): void {
  app.get('/numbers', { preHandler: requireAccountMember }, async (request, reply) => {
    const view = await presentNumbers(gateway, accountOf(request));
    return sendPage(reply, NumbersPage({ context: pageContext(request, reply, 'Numbers', 'numbers'), view }));
  });

  // Polled by open pages: it must not count as activity, or an open tab would never go idle.
  app.get('/numbers/status.json', { preHandler: requireAccountMember, config: { passiveSession: true } }, async (request, reply) => {
    const view = await presentNumberStatuses(gateway, accountOf(request));
    return reply.header('cache-control', 'no-store').send(view);
  });

  // Members may simulate too: it only produces test traffic on the account's own sandbox numbers.
  app.post<{ Params: { id: string } }>('/numbers/:id/simulate', { preHandler: requireAccountMember }, async (request, reply) => {
    const account = accountOf(request);
    // Looked up first and scoped to the account, so another account's number is a 404 whatever was typed.
    const number = await gateway.numbers.findNumber(request.params.id, account.id);
    const fromPhone = formText(request.body, 'from_phone');
    const message = formText(request.body, 'message');
    const result = await attempt(() => simulateIncoming(gateway, number, fromPhone, message));
    if (!result.ok) {
      const draft = { numberId: number.id, fromPhone, message, error: describeInputError(result.error) };
      const view = await presentNumbers(gateway, account, draft);
      return sendPage(reply, NumbersPage({ context: pageContext(request, reply, 'Numbers', 'numbers'), view }), 400);
    }
    return redirectWithNotice(reply, '/numbers', 'incoming_simulated');
  });
}

/** The same rules as POST /sandbox/receive: an international sender and text that can be stored. */
async function simulateIncoming(gateway: Gateway, number: WhatsAppNumber, rawFromPhone: string, text: string): Promise<Message> {
  const simulator = gateway.supervisor.simulatorFor(number);
  if (simulator === undefined) {
    throw new AppError('invalid_argument', `${number.phone} is a ${number.engine} number; only sandbox numbers can simulate incoming messages.`);
  }
  const fromPhone = parseE164(rawFromPhone);
  if (fromPhone === undefined) {
    throw new AppError('invalid_phone_number', 'From phone is not a valid international phone number; include the country code, e.g. +447700900123.');
  }
  assertSendableText(text, gateway.config.maxMessageLength);
  return simulator.deliverIncoming(number, fromPhone, text);
}

function describeInputError(error: AppError): string {
  // The length limit is in the details; without it "too long" gives nothing to aim for.
  return error.code === 'message_too_long' ? formErrorText(error) : error.message;
}
