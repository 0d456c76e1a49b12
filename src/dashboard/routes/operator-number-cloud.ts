import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../../domain/errors.ts';
import { withinAccount } from '../../domain/tenant-scope.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { operatorScopeOf, userActor } from '../context.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import type { CloudFormValues } from '../presenters/number-cloud.ts';
import type { NumberParams } from './operator-numbers.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'accounts' | 'cloudNumbers' | 'numberControl'>;

interface CloudParams extends NumberParams {
  accountId: string;
}

type CloudRequest = FastifyRequest<{ Params: CloudParams }>;
type RenderNumber = (request: CloudRequest, reply: FastifyReply, error?: AppError, cloudForm?: CloudFormValues) => Promise<FastifyReply>;

/**
 * Setting and clearing a `cloud` number's settings from its console page (docs/cloud-api.md),
 * through the same service as the operator API and the CLI: checked there, the token and secrets
 * sealed at rest, each change an audit row naming the signed-in operator. The path names the
 * account, as the API's does: another account's number (one moved since the page was loaded, say)
 * is not found. A refused value re-renders the page with the API's words and the ids typed,
 * never a secret; a number on another engine is refused as the API refuses it.
 */
export function registerCloudRoutes(app: FastifyInstance, gateway: Services, renderNumber: RenderNumber): void {
  const callerOf = async (request: CloudRequest) => {
    // An unknown account is a 404, as on the API, before its numbers are looked at.
    await gateway.accounts.getAccount(request.params.accountId);
    return { scope: withinAccount(operatorScopeOf(request), request.params.accountId), actor: userActor(request) };
  };
  const numberPage = (numberId: string) => `/operator/numbers/${encodeURIComponent(numberId)}#cloud`;
  // Only a refused value is shown on the form: a number not found is the error page's 404.
  const refusedOnForm = (error: AppError) => error.code === 'invalid_argument';

  app.post<{ Params: CloudParams }>('/operator/accounts/:accountId/numbers/:numberId/cloud', async (request, reply) => {
    const caller = await callerOf(request);
    const typed = {
      phoneNumberId: formText(request.body, 'phone_number_id'),
      businessAccountId: formText(request.body, 'business_account_id'),
    };
    const result = await attempt(() =>
      gateway.cloudNumbers.set(
        caller.scope,
        request.params.numberId,
        {
          ...typed,
          accessToken: formText(request.body, 'access_token'),
          appSecret: formText(request.body, 'app_secret'),
          verifyToken: formText(request.body, 'verify_token'),
        },
        caller.actor,
      ),
    );
    if (!result.ok && !refusedOnForm(result.error)) throw result.error;
    if (!result.ok) return renderNumber(request, reply, result.error, typed);
    // As on the API: a session that failed for want of settings starts again with them; a running one reads them on its next call.
    await gateway.numberControl.restart(caller, result.value.number).catch(() => undefined);
    return redirectWithNotice(reply, numberPage(result.value.number.id), 'cloud_settings_set');
  });

  app.post<{ Params: CloudParams }>('/operator/accounts/:accountId/numbers/:numberId/cloud/clear', async (request, reply) => {
    const caller = await callerOf(request);
    const result = await attempt(() => gateway.cloudNumbers.clear(caller.scope, request.params.numberId, caller.actor));
    if (!result.ok && !refusedOnForm(result.error)) throw result.error;
    if (!result.ok) return renderNumber(request, reply, result.error);
    return redirectWithNotice(reply, numberPage(result.value.id), 'cloud_settings_cleared');
  });
}
