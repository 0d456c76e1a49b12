import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor, type AppError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, sendPage, operatorScopeOf, userActor } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentOperatorNumber, presentOperatorNumbers } from '../presenters/operator.ts';
import { OperatorNumberPage, OperatorNumbersPage } from '../views/operator-numbers-page.tsx';
import { registerLinkRoutes } from './operator-number-link.ts';
import { registerProxyRoutes } from './operator-number-proxy.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'apiKeys' | 'numbers' | 'numberControl' | 'supervisor' | 'system'>;

export interface NumberParams {
  numberId: string;
}

/** `/operator/numbers`: every number, moving and removing them, and sandbox outage rehearsal. */
export function registerOperatorNumberRoutes(app: FastifyInstance, gateway: Services): void {
  const render = async (request: FastifyRequest, reply: FastifyReply, error?: AppError) => {
    const view = await presentOperatorNumbers(gateway, operatorScopeOf(request));
    const context = pageContext(request, reply, 'Numbers', 'operator');
    return sendPage(
      reply,
      OperatorNumbersPage({ context, ...view, error: error?.message }),
      error === undefined ? 200 : httpStatusFor(error.code),
    );
  };

  app.get('/operator/numbers', async (request, reply) => render(request, reply));

  const renderNumber = async (request: FastifyRequest<{ Params: NumberParams }>, reply: FastifyReply, error?: AppError) => {
    const { number, panel } = await presentOperatorNumber(gateway, operatorScopeOf(request), request.params.numberId);
    const context = pageContext(request, reply, number.phone, 'operator');
    return sendPage(
      reply,
      OperatorNumberPage({ context, number, panel, error: error?.message }),
      error === undefined ? 200 : httpStatusFor(error.code),
    );
  };

  app.get<{ Params: NumberParams }>('/operator/numbers/:numberId', renderNumber);

  registerLinkRoutes(app, gateway, renderNumber);
  registerProxyRoutes(app, gateway, renderNumber);

  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/reassign', async (request, reply) => {
    const result = await attempt(() =>
      gateway.numbers.reassignNumber(
        operatorScopeOf(request),
        request.params.numberId,
        formText(request.body, 'account_id'),
        userActor(request),
      ),
    );
    if (!result.ok) return render(request, reply, result.error);
    return redirectWithNotice(reply, '/operator/numbers', 'number_reassigned');
  });

  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/remove', async (request, reply) => {
    const result = await attempt(() => gateway.numbers.removeNumber(operatorScopeOf(request), request.params.numberId, userActor(request)));
    if (!result.ok) return render(request, reply, result.error);
    return redirectWithNotice(reply, '/operator/numbers', 'number_removed');
  });

  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/status', async (request, reply) => {
    const result = await attempt(() =>
      gateway.numbers.setSimulatedStatus(operatorScopeOf(request), request.params.numberId, formText(request.body, 'status')),
    );
    if (!result.ok) return render(request, reply, result.error);
    return redirectWithNotice(reply, '/operator/numbers', 'number_status_set');
  });
}
