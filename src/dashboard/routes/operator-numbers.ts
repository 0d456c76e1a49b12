import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor, type AppError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { pageContext, sendPage, operatorScopeOf, userActor } from '../context.ts';
import { attempt, formText, queryText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentOperatorNumber, presentOperatorNumbers } from '../presenters/operator.ts';
import { OperatorNumberPage, OperatorNumbersPage } from '../views/operator-numbers-page.tsx';
import { operatorCallerOf, registerLinkRoutes } from './operator-number-link.ts';
import { registerProxyRoutes } from './operator-number-proxy.ts';
import { registerCloudRoutes } from './operator-number-cloud.ts';
import type { CloudFormValues } from '../presenters/number-cloud.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<
  GatewayServices,
  | 'accounts'
  | 'apiKeys'
  | 'cloudNumbers'
  | 'config'
  | 'history'
  | 'numbers'
  | 'numberControl'
  | 'pauses'
  | 'sendQueues'
  | 'supervisor'
  | 'system'
>;

export interface NumberParams {
  numberId: string;
}

/** `/operator/numbers`: every number, moving and removing them, and sandbox outage rehearsal. */
export function registerOperatorNumberRoutes(app: FastifyInstance, gateway: Services): void {
  const render = async (request: FastifyRequest, reply: FastifyReply, error?: AppError) => {
    const scope = operatorScopeOf(request);
    const filter = queryText(request.query, 'status') ?? '';
    const view = await presentOperatorNumbers(gateway, scope, filter);
    const context = pageContext(request, reply, 'Numbers', 'operator');
    return sendPage(
      reply,
      OperatorNumbersPage({ context, ...view, filter, error: error?.message }),
      error === undefined ? 200 : httpStatusFor(error.code),
    );
  };

  app.get('/operator/numbers', async (request, reply) => render(request, reply));

  // A refused form is shown again on the number's page, with its message (and, for the Cloud API form, the ids typed).
  const renderNumber = async (
    request: FastifyRequest<{ Params: NumberParams }>,
    reply: FastifyReply,
    error?: AppError,
    cloudForm?: CloudFormValues,
  ) => {
    const { number, panel, cloud } = await presentOperatorNumber(gateway, operatorScopeOf(request), request.params.numberId);
    const context = pageContext(request, reply, number.phone, 'operator');
    return sendPage(
      reply,
      OperatorNumberPage({ context, number, panel, cloud, cloudForm, error: error?.message }),
      error === undefined ? 200 : httpStatusFor(error.code),
    );
  };

  app.get<{ Params: NumberParams }>('/operator/numbers/:numberId', renderNumber);

  registerLinkRoutes(app, gateway, renderNumber);
  registerProxyRoutes(app, gateway, renderNumber);
  registerCloudRoutes(app, gateway, renderNumber);

  // The health cards' actions, run on the number's owner node through NumberControl, as the account's own are.
  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/resume', async (request, reply) => {
    const caller = operatorCallerOf(request);
    await gateway.numberControl.resume(caller, await gateway.numbers.findNumber(caller.scope, request.params.numberId));
    return redirectWithNotice(reply, '/operator/numbers', 'number_resumed');
  });
  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/clear_queue', async (request, reply) => {
    const caller = operatorCallerOf(request);
    await gateway.numberControl.clearQueue(caller, await gateway.numbers.findNumber(caller.scope, request.params.numberId));
    return redirectWithNotice(reply, '/operator/numbers', 'queue_cleared');
  });

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
      gateway.numbers.setSimulatedStatus(
        operatorScopeOf(request),
        request.params.numberId,
        formText(request.body, 'status'),
        userActor(request),
      ),
    );
    if (!result.ok) return render(request, reply, result.error);
    return redirectWithNotice(reply, '/operator/numbers', 'number_status_set');
  });
}
