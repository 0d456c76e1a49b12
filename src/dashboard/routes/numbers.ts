import type { FastifyInstance } from 'fastify';
import { AppError, httpStatusFor } from '../../domain/errors.ts';
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
    const fromPhone = formText(request.body, 'from_phone');
    const message = formText(request.body, 'message');
    const result = await attempt(() => gateway.sandboxInbox.receiveOnNumber(account.scope, request.params.id, fromPhone, message));
    if (!result.ok) {
      // Another account's number (or none) is a 404 page, whatever was typed, not a form error.
      if (result.error.code === 'number_not_found') throw result.error;
      const draft = { numberId: request.params.id, fromPhone, message, error: describeInputError(result.error) };
      const view = await presentNumbers(gateway, account, draft);
      return sendPage(reply, NumbersPage({ context: pageContext(request, reply, 'Numbers', 'numbers'), view }), httpStatusFor(result.error.code));
    }
    return redirectWithNotice(reply, '/numbers', 'incoming_simulated');
  });
}

function describeInputError(error: AppError): string {
  // The length limit is in the details; without it "too long" gives nothing to aim for.
  return error.code === 'message_too_long' ? formErrorText(error) : error.message;
}
